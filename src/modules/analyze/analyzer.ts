import type { MeshConfigValues } from '../mesh-config';
import { AnalysisObject, ObjectSet } from './objects';

/** What an analyzer says about itself (`meshctl analyze -L` lists it). */
export interface AnalyzerMetadata {
  /** `<area>.<Name>`, e.g. `virtualservice.DestinationHostAnalyzer`. */
  name: string;
  description: string;
  /** The kinds it reads. */
  inputs: string[];
}

/** What an analyzer sees and how it reports. */
export interface AnalysisContext {
  readonly objects: ObjectSet;
  readonly meshConfig: MeshConfigValues;
  /** The control plane's namespace (`--meshNamespace`, `mesh-system`). */
  readonly systemNamespace: string;
  /** Reports catalogue message `name` on `object`; `args` fill its template; `fieldPath` points the line. */
  report(name: string, object: AnalysisObject, args: readonly unknown[], fieldPath?: string): void;
}

/**
 * The `Analyzer` contribution point: each contribution is one named analyzer. The mesh's own
 * analyzers are bound in the analyze area; a plugin binds more to the same point.
 */
export const AnalyzerContribution = Symbol.for('mesh.AnalyzerContribution');
export interface Analyzer {
  readonly metadata: AnalyzerMetadata;
  analyze(ctx: AnalysisContext): void;
}

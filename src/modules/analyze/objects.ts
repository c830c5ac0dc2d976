import type { FieldLines } from '../config';

/** Where an input object came from: a file and the line its document starts on. */
export interface Origin {
  file: string;
  line?: number;
}

/**
 * One object analysis reads, of any kind (mesh kinds, Services, Pods, Namespaces...), kept
 * as written: analyzers read the fields they need and tolerate the rest.
 */
export interface AnalysisObject {
  apiVersion: string;
  kind: string;
  /** '' when the input gave none (files without a namespace). */
  namespace: string;
  name: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  /** The whole document. */
  raw: Record<string, unknown>;
  origin?: Origin;
  /** Line of each field by path (`spec.servers[0].port`), for file inputs. */
  fieldLines?: FieldLines;
}

/** `Kind ns/name`, or `Kind name` without a namespace: how messages name their resource. */
export function resourceName(o: Pick<AnalysisObject, 'kind' | 'namespace' | 'name'>): string {
  return o.namespace ? `${o.kind} ${o.namespace}/${o.name}` : `${o.kind} ${o.name}`;
}

/** A field of an object by dotted path, or undefined. */
export function field(o: unknown, ...keys: (string | number)[]): unknown {
  let v: unknown = o;
  for (const k of keys) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<string | number, unknown>)[k];
  }
  return v;
}

export function asArray(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

export function asRecord(v: unknown): Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

export function asStringMap(v: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, x] of Object.entries(asRecord(v))) if (typeof x === 'string' || typeof x === 'number' || typeof x === 'boolean') out[k] = String(x);
  return out;
}

/** Turns a parsed document into an analysis object, or undefined when it has no kind or name. */
export function toAnalysisObject(doc: unknown, origin?: Origin, fieldLines?: FieldLines): AnalysisObject | undefined {
  const raw = asRecord(doc);
  const meta = asRecord(raw.metadata);
  if (typeof raw.kind !== 'string' || typeof meta.name !== 'string' || meta.name === '') return undefined;
  return {
    apiVersion: typeof raw.apiVersion === 'string' ? raw.apiVersion : '',
    kind: raw.kind,
    namespace: typeof meta.namespace === 'string' ? meta.namespace : '',
    name: meta.name,
    labels: asStringMap(meta.labels),
    annotations: asStringMap(meta.annotations),
    raw,
    ...(origin ? { origin } : {}),
    ...(fieldLines ? { fieldLines } : {}),
  };
}

/** The objects under analysis, by kind; later additions replace earlier ones of the same identity (files over the cluster). */
export class ObjectSet {
  private readonly byKind = new Map<string, Map<string, AnalysisObject>>();

  add(o: AnalysisObject): void {
    let m = this.byKind.get(o.kind);
    if (!m) this.byKind.set(o.kind, (m = new Map()));
    m.set(`${o.namespace}/${o.name}`, o);
  }

  of(kind: string): AnalysisObject[] {
    return [...(this.byKind.get(kind)?.values() ?? [])];
  }

  get(kind: string, namespace: string, name: string): AnalysisObject | undefined {
    return this.byKind.get(kind)?.get(`${namespace}/${name}`);
  }

  kinds(): string[] {
    return [...this.byKind.keys()];
  }

  all(): AnalysisObject[] {
    return [...this.byKind.values()].flatMap((m) => [...m.values()]);
  }
}

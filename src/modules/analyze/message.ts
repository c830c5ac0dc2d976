import { MessageLevel } from './catalogue';
import { Origin } from './objects';

/** One finding of an analyzer. */
export interface AnalysisMessage {
  code: string;
  name: string;
  level: MessageLevel;
  /** `Kind ns/name` or `Kind name`. */
  resource: string;
  /** The object's namespace ('' for cluster-scoped or namespace-less inputs). */
  namespace: string;
  origin?: Origin;
  text: string;
}

/** The page that documents a message code. */
export function documentationUrl(m: Pick<AnalysisMessage, 'code'>): string {
  return `https://mesh.io/docs/reference/config/analysis/${m.code.toLowerCase()}/`;
}

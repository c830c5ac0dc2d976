import { badRequest } from './errors';
import type { Obj } from './store';

/** One log line as the kubelet keeps it: when it was written and its text (no newline). */
export interface LogLine {
  at: Date;
  text: string;
}

/** The query of `GET pods/<name>/log` that shapes the answer. */
export interface LogQuery {
  container?: string;
  previous?: boolean;
  sinceSeconds?: number;
  sinceTime?: string;
  tailLines?: number;
  limitBytes?: number;
  timestamps?: boolean;
}

/**
 * `pods/<name>/log`: the log text of each pod's containers (current and previous instance), as
 * a test sets it, answered as the real API server does: the container must be named when the
 * pod has several, sinceTime/sinceSeconds cut earlier lines, tailLines keeps the last lines,
 * limitBytes cuts the answer, timestamps prefixes each line with its RFC 3339 time.
 */
export class PodLogs {
  private readonly logs = new Map<string, LogLine[]>();

  /** Sets the log of `container` of pod `namespace/pod` (`previous`: of its last terminated instance). Plain strings are stamped now. */
  set(namespace: string, pod: string, container: string, lines: readonly (LogLine | string)[], options: { previous?: boolean } = {}): void {
    const now = new Date();
    this.logs.set(key(namespace, pod, container, !!options.previous), lines.map((l) => (typeof l === 'string' ? { at: now, text: l } : l)));
  }

  /** Forgets every log. */
  clear(): void {
    this.logs.clear();
  }

  /** The answer to a log request for `pod` (as stored). */
  read(pod: Obj, query: LogQuery): string {
    const namespace = pod.metadata.namespace as string;
    const name = pod.metadata.name as string;
    const spec = (pod as { spec?: { containers?: { name: string }[]; initContainers?: { name: string }[] } }).spec ?? {};
    const names = [...(spec.containers ?? []), ...(spec.initContainers ?? [])].map((c) => c.name);
    let container = query.container;
    if (!container) {
      if ((spec.containers ?? []).length !== 1) throw badRequest(`a container name must be specified for pod ${name}, choose one of: [${names.join(' ')}]`);
      container = spec.containers![0].name;
    }
    if (!names.includes(container)) throw badRequest(`container ${container} is not valid for pod ${name}`);
    const stored = this.logs.get(key(namespace, name, container, !!query.previous));
    if (!stored) {
      if (query.previous) throw badRequest(`previous terminated container "${container}" in pod "${name}" not found`);
      return '';
    }
    let lines = stored;
    const since = query.sinceTime ? Date.parse(query.sinceTime) : query.sinceSeconds !== undefined ? Date.now() - query.sinceSeconds * 1000 : undefined;
    if (query.sinceTime && Number.isNaN(since)) throw badRequest(`sinceTime: invalid value ${JSON.stringify(query.sinceTime)}`);
    if (since !== undefined) lines = lines.filter((l) => l.at.getTime() >= since);
    if (query.tailLines !== undefined && query.tailLines >= 0) lines = query.tailLines === 0 ? [] : lines.slice(-query.tailLines);
    let text = lines.map((l) => `${query.timestamps ? `${l.at.toISOString()} ` : ''}${l.text}\n`).join('');
    if (query.limitBytes !== undefined && query.limitBytes > 0) text = Buffer.from(text).subarray(0, query.limitBytes).toString();
    return text;
  }
}

function key(namespace: string, pod: string, container: string, previous: boolean): string {
  return `${namespace}/${pod}/${container}/${previous ? 'previous' : 'current'}`;
}

/** The log query of a request's search parameters; bad numbers are a 400 as on the real server. */
export function logQuery(q: URLSearchParams): LogQuery {
  const int = (name: string): number | undefined => {
    const v = q.get(name);
    if (v === null) return undefined;
    if (!/^-?\d+$/.test(v)) throw badRequest(`${name}: invalid value ${JSON.stringify(v)}`);
    return Number(v);
  };
  const bool = (name: string) => q.get(name) === 'true' || q.get(name) === '1';
  const sinceSeconds = int('sinceSeconds');
  if (sinceSeconds !== undefined && sinceSeconds < 1) throw badRequest('sinceSeconds: Invalid value: must be greater than 0');
  if (sinceSeconds !== undefined && q.get('sinceTime')) throw badRequest('at most one of `sinceTime` or `sinceSeconds` may be specified');
  return {
    container: q.get('container') ?? undefined,
    previous: bool('previous'),
    sinceSeconds,
    sinceTime: q.get('sinceTime') ?? undefined,
    tailLines: int('tailLines'),
    limitBytes: int('limitBytes'),
    timestamps: bool('timestamps'),
  };
}

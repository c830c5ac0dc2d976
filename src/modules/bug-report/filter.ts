import { UserError } from '../shared/user-error';
import { globRegExp } from './glob';

/**
 * One `--include`/`--exclude` filter (spec/03 usage rule 4):
 * `ns1,ns2/dep1,dep2/pod1,pod2/lbl1=val1,.../ann1=val1,.../cntr1,cntr2`. Parts may be omitted
 * (empty or left off at the end); an omitted part matches everything. Names and label or
 * annotation values take `*`; label and annotation keys are exact.
 */
export interface PodFilter {
  /** The filter as written, for messages. */
  readonly text: string;
  readonly namespaces: RegExp[];
  readonly deployments: RegExp[];
  readonly pods: RegExp[];
  /** Every pair must match. */
  readonly labels: [string, RegExp][];
  readonly annotations: [string, RegExp][];
  readonly containers: RegExp[];
}

/** What a filter is matched against: one container of one pod. */
export interface ContainerRef {
  namespace: string;
  /** The deployment whose selector takes the pod, if any. */
  deployment?: string;
  pod: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  container: string;
}

const PART_NAMES = ['namespace', 'deployment', 'pod', 'label', 'annotation', 'container'] as const;
const NAME = /^[A-Za-z0-9._*-]+$/;
const KEY = /^[A-Za-z0-9._-]+$/;
const MAX_FILTER_LENGTH = 4096;

/** Parses one filter; `flag` names where it came from. @throws UserError naming the filter and the bad part. */
export function parsePodFilter(text: string, flag: string): PodFilter {
  const bad = (why: string) => new UserError(`${flag} filter ${JSON.stringify(text.length > 100 ? `${text.slice(0, 100)}...` : text)}: ${why}`);
  if (typeof text !== 'string') throw new UserError(`${flag} filter must be a string, got ${JSON.stringify(text)}`);
  if (text.length > MAX_FILTER_LENGTH) throw bad(`longer than ${MAX_FILTER_LENGTH} characters`);
  const parts = text.split('/');
  if (parts.length > PART_NAMES.length) throw bad(`has ${parts.length} parts; the form is namespaces/deployments/pods/labels/annotations/containers`);
  const entries = (i: number): string[] => {
    const part = parts[i] ?? '';
    if (part === '') return [];
    const list = part.split(',');
    if (list.some((e) => e === '')) throw bad(`empty ${PART_NAMES[i]} name in ${JSON.stringify(part)}`);
    return list;
  };
  const names = (i: number): RegExp[] =>
    entries(i).map((name) => {
      if (!NAME.test(name)) throw bad(`${PART_NAMES[i]} ${JSON.stringify(name)} may only have letters, digits, '.', '-', '_' and '*'`);
      return globRegExp(name);
    });
  const pairs = (i: number): [string, RegExp][] =>
    entries(i).map((pair) => {
      const eq = pair.indexOf('=');
      if (eq < 0) throw bad(`${PART_NAMES[i]} ${JSON.stringify(pair)} is not key=value`);
      const key = pair.slice(0, eq);
      const value = pair.slice(eq + 1);
      if (!KEY.test(key)) throw bad(`${PART_NAMES[i]} key ${JSON.stringify(key)} may only have letters, digits, '.', '-' and '_' (no '*')`);
      if (value !== '' && !NAME.test(value)) throw bad(`${PART_NAMES[i]} value ${JSON.stringify(value)} may only have letters, digits, '.', '-', '_' and '*'`);
      return [key, globRegExp(value)];
    });
  return { text, namespaces: names(0), deployments: names(1), pods: names(2), labels: pairs(3), annotations: pairs(4), containers: names(5) };
}

/** Whether `filter` takes the container: every part given matches. */
export function filterMatches(filter: PodFilter, c: ContainerRef): boolean {
  const any = (globs: RegExp[], value: string | undefined) => globs.length === 0 || (value !== undefined && globs.some((g) => g.test(value)));
  const all = (pairs: [string, RegExp][], values: Record<string, string>) => pairs.every(([k, v]) => k in values && v.test(values[k]));
  return (
    any(filter.namespaces, c.namespace) &&
    any(filter.deployments, c.deployment) &&
    any(filter.pods, c.pod) &&
    all(filter.labels, c.labels) &&
    all(filter.annotations, c.annotations) &&
    any(filter.containers, c.container)
  );
}

/** Usage rule 4: included when no include filter is given or one matches, and no exclude filter matches. */
export function containerSelected(include: readonly PodFilter[], exclude: readonly PodFilter[], c: ContainerRef): boolean {
  if (include.length > 0 && !include.some((f) => filterMatches(f, c))) return false;
  return !exclude.some((f) => filterMatches(f, c));
}

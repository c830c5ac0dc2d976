/**
 * RBAC predicates that can say why they gave their answer: the proxy's debug log and
 * `meshctl x authz simulate` read the same words, from the same compiled config. Nothing here
 * runs per request unless an explanation is asked for: `why` is only called then.
 */
import { valueAt } from '../matchers/metadata-matcher';
import type { RbacSubject } from './subject';
import { JWT_AUTHN_FILTER } from '../../../envoy/well-known';

export interface SubjectPredicate {
  (subject: RbacSubject): boolean;
  /** The condition and what the subject has for it, e.g. `url_path prefix "/api/" did not match "/admin"`. */
  readonly why: (subject: RbacSubject) => string;
}

function predicate(test: (s: RbacSubject) => boolean, why: (s: RbacSubject) => string): SubjectPredicate {
  return Object.assign(test, { why });
}

/** One matcher of the config: `what` says the condition, `observed` the subject's value it looks at. */
export function leaf(what: string, test: (s: RbacSubject) => boolean, observed: (s: RbacSubject) => string): SubjectPredicate {
  return predicate(test, (s) => `${what} ${test(s) ? 'matched' : 'did not match'} ${observed(s)}`);
}

export function always(what: string): SubjectPredicate {
  return predicate(() => true, () => `${what} matches anything`);
}

/** Every one must hold; when one does not, it is the reason (the first, as evaluation stops there). */
export function allOf(list: readonly SubjectPredicate[]): SubjectPredicate {
  return predicate(
    (s) => list.every((p) => p(s)),
    (s) => {
      const failing = list.find((p) => !p(s));
      return failing ? failing.why(s) : list.length === 1 ? list[0].why(s) : `all of ${list.length} conditions matched`;
    },
  );
}

/** One must hold; when none does, each alternative's reason. */
export function anyOf(list: readonly SubjectPredicate[]): SubjectPredicate {
  return predicate(
    (s) => list.some((p) => p(s)),
    (s) => {
      const matching = list.find((p) => p(s));
      if (matching) return matching.why(s);
      if (list.length === 1) return list[0].why(s);
      return `none of ${list.length} alternatives matched: ${list.map((p, i) => `(${i + 1}) ${p.why(s)}`).join('; ')}`;
    },
  );
}

export function not(inner: SubjectPredicate): SubjectPredicate {
  return predicate((s) => !inner(s), (s) => `not(${inner.why(s)})`);
}

/** A config value, short: JSON without the quotes around simple keys. */
export function compact(value: unknown): string {
  return JSON.stringify(value)?.replace(/"([a-z_]+)":/g, '$1:') ?? String(value);
}

export function quoted(value: string | undefined, absent = '(absent)'): string {
  return value === undefined ? absent : JSON.stringify(value);
}

/** A metadata matcher's name: a JWT claim by its policy name (`request.auth.claims[groups]`), else filter and path. */
export function metadataLabel(config: unknown): string {
  const m = (config ?? {}) as { filter?: string; path?: { key?: string }[] };
  const keys = (m.path ?? []).map((p) => String(p.key));
  if (m.filter === JWT_AUTHN_FILTER && keys[0] === 'payload' && keys.length > 1) return `request.auth.claims${keys.slice(1).map((k) => `[${k}]`).join('')}`;
  return `metadata ${m.filter ?? ''}${keys.map((k) => `[${k}]`).join('')}`;
}

/** What a metadata matcher sees in the subject. */
export function metadataObserved(config: unknown): (s: RbacSubject) => string {
  const m = (config ?? {}) as { filter?: string; path?: { key?: string }[] };
  const keys = (m.path ?? []).map((p) => String(p.key));
  return (s) => {
    const value = valueAt(s.metadata[m.filter ?? ''], keys);
    return value === undefined ? '(absent)' : JSON.stringify(value);
  };
}

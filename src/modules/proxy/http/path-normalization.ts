/**
 * What the HTTP connection manager does to `:path` before anything reads it, in Envoy's order
 * (ConnectionManagerUtility::maybeNormalizePath):
 *
 * 1. the fragment (`#...`) is cut off, unless the proxy runs with Envoy's deprecated unsafe
 *    flag (`http_strip_fragment_from_path_unsafe_if_disabled` false: then it is kept);
 * 2. `path_with_escaped_slashes_action`: `%2F`/`%2f` become `/` and `%5C`/`%5c` become `\`
 *    (then a slash, when normalizing), and the request is rejected (400), redirected there (307)
 *    or forwarded; KEEP_UNCHANGED (and IMPLEMENTATION_SPECIFIC_DEFAULT, as in Envoy) leaves them;
 * 3. `normalize_path`: RFC 3986 canonicalization of the part before `?` (path-canonicalizer.ts);
 *    an invalid path is rejected (400);
 * 4. `merge_slashes`: `//` → `/` in the part before `?`.
 *
 * The query string is never changed. RBAC, jwt_authn, route selection and the request line sent
 * upstream all see the result.
 */
import { asBool, asString, fail, has, optionalObject } from '../filters/shared/config';
import type { Decoded } from '../xds/xds-client';
import { canonicalizePath } from './path-canonicalizer';

export const ESCAPED_SLASHES_ACTIONS = ['KEEP_UNCHANGED', 'REJECT_REQUEST', 'UNESCAPE_AND_REDIRECT', 'UNESCAPE_AND_FORWARD'] as const;
export type EscapedSlashesAction = (typeof ESCAPED_SLASHES_ACTIONS)[number];

/** Proxy-wide path handling, Envoy runtime flags in the incumbent (the agent sets them). */
export interface PathRuntimeFlags {
  /**
   * `envoy.reloadable_features.http_strip_fragment_from_path_unsafe_if_disabled` (agent
   * setting HTTP_STRIP_FRAGMENT_FROM_PATH_UNSAFE_IF_DISABLED): true drops `#fragment` before
   * anything sees the path; false keeps it, which lets requests slip past path policies.
   */
  stripFragmentFromPath: boolean;
}

/** One connection manager's path handling: its HCM fields plus the proxy's runtime flags. */
export interface PathNormalization extends PathRuntimeFlags {
  normalizePath: boolean;
  mergeSlashes: boolean;
  escapedSlashes: EscapedSlashesAction;
}

export type PathOutcome =
  /** Go on with this path. */
  | { kind: 'forward'; path: string }
  /** Answer 307 with this path as `location` (UNESCAPE_AND_REDIRECT found an escaped slash). */
  | { kind: 'redirect'; path: string }
  /** Answer 400: the path is invalid, or REJECT_REQUEST found an escaped slash. */
  | { kind: 'reject'; reason: string };

/** Reads the path options of an HttpConnectionManager as decoded; throws (NACK) naming the field. */
export function pathNormalizationOf(hcm: Decoded, flags: PathRuntimeFlags, field = 'http_connection_manager'): PathNormalization {
  if (has(hcm, 'path_normalization_options')) fail(`${field}.path_normalization_options`, 'is not supported by the built-in proxy');
  const normalizePath = optionalObject(hcm.normalize_path, `${field}.normalize_path`);
  const action = asString(hcm.path_with_escaped_slashes_action, `${field}.path_with_escaped_slashes_action`) || 'IMPLEMENTATION_SPECIFIC_DEFAULT';
  let escapedSlashes: EscapedSlashesAction;
  if (action === 'IMPLEMENTATION_SPECIFIC_DEFAULT') escapedSlashes = 'KEEP_UNCHANGED';
  else if ((ESCAPED_SLASHES_ACTIONS as readonly string[]).includes(action)) escapedSlashes = action as EscapedSlashesAction;
  else fail(`${field}.path_with_escaped_slashes_action`, `unknown action ${JSON.stringify(action)}`);
  return {
    // Unset is false, as Envoy's runtime default `http_connection_manager.normalize_path`.
    normalizePath: asBool(normalizePath?.value, `${field}.normalize_path.value`),
    mergeSlashes: asBool(hcm.merge_slashes, `${field}.merge_slashes`),
    escapedSlashes,
    stripFragmentFromPath: flags.stripFragmentFromPath,
  };
}

/** Splits `:path` into the part before `?` and the rest (the query with its `?`, or ''). */
function splitQuery(path: string): [string, string] {
  const q = path.indexOf('?');
  return q < 0 ? [path, ''] : [path.slice(0, q), path.slice(q)];
}

const ESCAPED_SLASH = /%2[Ff]|%5[Cc]/g;

/** `%2F` → `/`, `%5C` → `\` before the query; whether any was found. */
export function unescapeSlashes(path: string): { path: string; found: boolean } {
  const [before, query] = splitQuery(path);
  if (!before.includes('%')) return { path, found: false };
  const unescaped = before.replace(ESCAPED_SLASH, (m) => (m[1] === '2' ? '/' : '\\'));
  return { path: unescaped + query, found: unescaped.length !== before.length };
}

/** `//` runs become one `/` before the query, keeping a leading and a trailing slash (Envoy's mergeSlashes). */
export function mergeSlashes(path: string): string {
  const [before, query] = splitQuery(path);
  if (!before.includes('//')) return path;
  const segments = before.split('/').filter((s) => s !== '');
  return `${before.startsWith('/') ? '/' : ''}${segments.join('/')}${before.endsWith('/') ? '/' : ''}${query}`;
}

/** The path with its part before `?` canonicalized, or undefined when it is invalid. */
export function canonicalPath(path: string): string | undefined {
  const [before, query] = splitQuery(path);
  const canonical = canonicalizePath(before);
  return canonical === undefined ? undefined : canonical + query;
}

/** Runs the steps on a request's `:path`. */
export function normalizeRequestPath(original: string, options: PathNormalization): PathOutcome {
  let path = original;
  if (options.stripFragmentFromPath) {
    const hash = path.indexOf('#');
    if (hash >= 0) path = path.slice(0, hash);
  }
  let redirect = false;
  if (options.escapedSlashes !== 'KEEP_UNCHANGED') {
    const unescaped = unescapeSlashes(path);
    if (unescaped.found) {
      if (options.escapedSlashes === 'REJECT_REQUEST') return { kind: 'reject', reason: 'escaped slash in path' };
      redirect = options.escapedSlashes === 'UNESCAPE_AND_REDIRECT';
      path = unescaped.path;
    }
  }
  if (options.normalizePath) {
    const canonical = canonicalPath(path);
    if (canonical === undefined) return { kind: 'reject', reason: 'path normalization failed' };
    path = canonical;
  }
  // Last, as in Envoy: canonicalization may leave `//` behind (`/a\/b` → `/a//b`).
  if (options.mergeSlashes) path = mergeSlashes(path);
  return redirect ? { kind: 'redirect', path } : { kind: 'forward', path };
}

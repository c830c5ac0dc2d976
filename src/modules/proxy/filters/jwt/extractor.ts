import { queryParameters } from '../matchers/query';
import type { JwtProvider } from './provider';

/** A token found in a request, with where it came from. */
export interface JwtLocation {
  readonly token: string;
  /** Whether a provider that names this location accepts tokens of `issuer`. */
  issuerAllowed(issuer: string): boolean;
  /** Drops the token from the request (`forward: false`); only header tokens can be removed, as in Envoy. */
  remove(headers: Record<string, string>): void;
}

/** The issuers that named a location; an empty issuer allows them all. */
class IssuerSet {
  private any = false;
  private readonly issuers = new Set<string>();

  add(issuer: string): void {
    if (issuer === '') this.any = true;
    else this.issuers.add(issuer);
  }

  allows(issuer: string): boolean {
    return this.any || this.issuers.has(issuer);
  }
}

const DEFAULT_HEADER = { name: 'authorization', valuePrefix: 'Bearer ' };
const DEFAULT_PARAM = 'access_token';
// Base64url plus '.', the characters of a compact JWT.
const JWT_CHARS = /[A-Za-z0-9_.-]+/;

/**
 * Envoy's JWT extractor over one or several providers: header locations (ordered by name and
 * prefix), then query parameters, then cookies, each remembering which issuers named it.
 * A provider naming no location gets `Authorization: Bearer` and `?access_token=`.
 */
export class TokenExtractor {
  private readonly headers = new Map<string, { name: string; valuePrefix: string; issuers: IssuerSet }>();
  private readonly params = new Map<string, IssuerSet>();
  private readonly cookies = new Map<string, IssuerSet>();
  /** Headers a provider writes (payload, claims): removed before verification so clients cannot forge them. */
  private readonly sanitized = new Set<string>();

  constructor(providers: readonly JwtProvider[]) {
    for (const provider of providers) this.addProvider(provider);
  }

  private addProvider(p: JwtProvider): void {
    const none = p.fromHeaders.length === 0 && p.fromParams.length === 0 && p.fromCookies.length === 0;
    for (const header of none ? [DEFAULT_HEADER] : p.fromHeaders) {
      const key = header.name + header.valuePrefix;
      if (!this.headers.has(key)) this.headers.set(key, { ...header, issuers: new IssuerSet() });
      this.headers.get(key)!.issuers.add(p.issuer);
    }
    for (const param of none ? [DEFAULT_PARAM] : p.fromParams) issuerSet(this.params, param).add(p.issuer);
    for (const cookie of p.fromCookies) issuerSet(this.cookies, cookie).add(p.issuer);
    if (p.forwardPayloadHeader !== '') this.sanitized.add(p.forwardPayloadHeader);
    for (const { headerName } of p.claimToHeaders) this.sanitized.add(headerName);
  }

  sanitize(headers: Record<string, string>): void {
    for (const name of this.sanitized) delete headers[name];
  }

  extract(request: { readonly path: string; readonly headers: Readonly<Record<string, string>> }): JwtLocation[] {
    const found: JwtLocation[] = [];
    for (const [, spec] of sorted(this.headers)) {
      const value = request.headers[spec.name];
      if (value === undefined) continue;
      const token = spec.valuePrefix === '' ? value : tokenAfterPrefix(value, spec.valuePrefix);
      if (token === undefined) continue;
      found.push({
        token,
        issuerAllowed: (i) => spec.issuers.allows(i),
        remove: (h) => {
          delete h[spec.name];
        },
      });
    }
    if (this.params.size > 0) {
      const query = queryParameters(request.path);
      for (const [name, issuers] of sorted(this.params)) {
        const token = query.get(name);
        if (token !== undefined) found.push(unremovable(token, issuers));
      }
    }
    if (this.cookies.size > 0) {
      const cookies = parseCookies(request.headers.cookie);
      for (const [name, issuers] of sorted(this.cookies)) {
        const token = cookies.get(name);
        if (token !== undefined) found.push(unremovable(token, issuers));
      }
    }
    return found;
  }
}

function issuerSet(map: Map<string, IssuerSet>, key: string): IssuerSet {
  let set = map.get(key);
  if (!set) map.set(key, (set = new IssuerSet()));
  return set;
}

function sorted<T>(map: Map<string, T>): [string, T][] {
  return [...map].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

function unremovable(token: string, issuers: IssuerSet): JwtLocation {
  return { token, issuerAllowed: (i) => issuers.allows(i), remove: () => undefined };
}

/** The token after the first occurrence of the prefix: the run of JWT characters that follows (or the rest, as Envoy). */
function tokenAfterPrefix(value: string, prefix: string): string | undefined {
  const at = value.indexOf(prefix);
  if (at < 0) return undefined;
  const rest = value.slice(at + prefix.length);
  const match = JWT_CHARS.exec(rest);
  return match ? match[0] : value;
}

/** `Cookie` pairs; surrounding double quotes are dropped; the first of repeated names wins. */
function parseCookies(header: string | undefined): Map<string, string> {
  const cookies = new Map<string, string>();
  for (const part of (header ?? '').split(';')) {
    const pair = part.trimStart();
    const eq = pair.indexOf('=');
    if (eq <= 0) continue;
    const name = pair.slice(0, eq);
    let value = pair.slice(eq + 1);
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
    if (!cookies.has(name)) cookies.set(name, value);
  }
  return cookies;
}

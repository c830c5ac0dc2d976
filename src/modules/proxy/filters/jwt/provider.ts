import * as fs from 'node:fs';
import type { FilterContext } from '../../http/filter-api';
import { compileStringMatcher, StringPredicate } from '../matchers/string-matcher';
import {
  asBool, asList, asNumber, asObject, asString, durationMs, fail, has, oneofMember, optionalObject, requiredString,
} from '../shared/config';
import { JwksSource, LocalJwksSource, RemoteJwksSource } from './jwks-source';

/** Envoy's defaults. */
export const DEFAULT_CLOCK_SKEW_SECONDS = 60;
export const DEFAULT_JWKS_CACHE_MS = 10 * 60 * 1000;
/** `http_uri.timeout` is required by Envoy; used only if a config leaves it out. */
export const DEFAULT_JWKS_FETCH_TIMEOUT_MS = 5000;

export interface HeaderLocation {
  readonly name: string;
  readonly valuePrefix: string;
}

export interface ClaimToHeader {
  readonly headerName: string;
  readonly claimName: string;
}

/** One `providers` entry of JwtAuthentication, read and ready to use. */
export interface JwtProvider {
  readonly name: string;
  /** Empty: tokens of any issuer. */
  readonly issuer: string;
  readonly audiences: AudienceCheck;
  readonly subjects?: StringPredicate;
  /** `require_expiration` / `max_lifetime`: the longest remaining lifetime a token may have (Infinity = only needs `exp`). */
  readonly maxLifetimeSeconds?: number;
  readonly jwks: JwksSource;
  readonly forward: boolean;
  readonly fromHeaders: readonly HeaderLocation[];
  readonly fromParams: readonly string[];
  readonly fromCookies: readonly string[];
  readonly forwardPayloadHeader: string;
  readonly padForwardPayloadHeader: boolean;
  readonly payloadInMetadata: string;
  readonly headerInMetadata: string;
  readonly failedStatusInMetadata: string;
  readonly clockSkewSeconds: number;
  readonly claimToHeaders: readonly ClaimToHeader[];
  readonly spaceDelimitedClaims: readonly string[];
}

/** Envoy's CheckAudience: `http(s)://` and one trailing `/` are ignored; no configured audience allows any. */
export class AudienceCheck {
  private readonly allowed: ReadonlySet<string>;

  constructor(audiences: readonly string[]) {
    this.allowed = new Set(audiences.map(sanitizeAudience));
  }

  allows(tokenAudiences: readonly string[]): boolean {
    return this.allowed.size === 0 || tokenAudiences.some((aud) => this.allowed.has(sanitizeAudience(aud)));
  }
}

function sanitizeAudience(audience: string): string {
  const withoutScheme = audience.replace(/^https?:\/\//, '');
  return withoutScheme.endsWith('/') ? withoutScheme.slice(0, -1) : withoutScheme;
}

export function parseProvider(name: string, value: unknown, field: string, context: FilterContext, filterName: string): JwtProvider {
  const provider = asObject(value, field);
  const strings = (key: string): string[] => asList(provider[key], `${field}.${key}`).map((v, i) => requiredString(v, `${field}.${key}[${i}]`));
  const requireExpiration = asBool(provider.require_expiration, `${field}.require_expiration`);
  const maxLifetimeMs = durationMs(provider.max_lifetime, `${field}.max_lifetime`);
  const subjects = optionalObject(provider.subjects, `${field}.subjects`);
  const normalize = optionalObject(provider.normalize_payload_in_metadata, `${field}.normalize_payload_in_metadata`);
  return {
    name,
    issuer: asString(provider.issuer, `${field}.issuer`),
    audiences: new AudienceCheck(strings('audiences')),
    subjects: subjects ? compileStringMatcher(subjects, `${field}.subjects`) : undefined,
    maxLifetimeSeconds: maxLifetimeMs !== undefined ? maxLifetimeMs / 1000 : requireExpiration ? Infinity : undefined,
    jwks: jwksSource(provider, field, context, `${filterName}: provider ${name}`),
    forward: asBool(provider.forward, `${field}.forward`),
    fromHeaders: asList(provider.from_headers, `${field}.from_headers`).map((h, i) => {
      const header = asObject(h, `${field}.from_headers[${i}]`);
      return {
        name: requiredString(header.name, `${field}.from_headers[${i}].name`).toLowerCase(),
        valuePrefix: asString(header.value_prefix, `${field}.from_headers[${i}].value_prefix`),
      };
    }),
    fromParams: strings('from_params'),
    fromCookies: strings('from_cookies'),
    forwardPayloadHeader: asString(provider.forward_payload_header, `${field}.forward_payload_header`).toLowerCase(),
    padForwardPayloadHeader: asBool(provider.pad_forward_payload_header, `${field}.pad_forward_payload_header`),
    payloadInMetadata: asString(provider.payload_in_metadata, `${field}.payload_in_metadata`),
    headerInMetadata: asString(provider.header_in_metadata, `${field}.header_in_metadata`),
    failedStatusInMetadata: asString(provider.failed_status_in_metadata, `${field}.failed_status_in_metadata`),
    // Zero (unset) means Envoy's default.
    clockSkewSeconds: asNumber(provider.clock_skew_seconds, `${field}.clock_skew_seconds`) || DEFAULT_CLOCK_SKEW_SECONDS,
    claimToHeaders: asList(provider.claim_to_headers, `${field}.claim_to_headers`).map((c, i) => {
      const entry = asObject(c, `${field}.claim_to_headers[${i}]`);
      return {
        headerName: requiredString(entry.header_name, `${field}.claim_to_headers[${i}].header_name`).toLowerCase(),
        claimName: requiredString(entry.claim_name, `${field}.claim_to_headers[${i}].claim_name`),
      };
    }),
    spaceDelimitedClaims: normalize
      ? asList(normalize.space_delimited_claims, `${field}.normalize_payload_in_metadata.space_delimited_claims`).map((v) => String(v))
      : [],
  };
}

function jwksSource(provider: Record<string, unknown>, field: string, context: FilterContext, who: string): JwksSource {
  const kind = oneofMember(provider, ['remote_jwks', 'local_jwks'], field);
  if (kind === 'local_jwks') {
    const text = readDataSource(provider.local_jwks, `${field}.local_jwks`);
    return new LocalJwksSource(text, (status) => context.log('warn', `${who}: invalid local_jwks (${status.message}); its tokens will fail`));
  }
  const at = `${field}.remote_jwks`;
  const remote = asObject(provider.remote_jwks, at);
  const httpUri = asObject(remote.http_uri, `${at}.http_uri`);
  const uri = requiredString(httpUri.uri, `${at}.http_uri.uri`);
  checkHttpUrl(uri, `${at}.http_uri.uri`);
  const source = new RemoteJwksSource({
    uri,
    timeoutMs: durationMs(httpUri.timeout, `${at}.http_uri.timeout`) || DEFAULT_JWKS_FETCH_TIMEOUT_MS,
    cacheDurationMs: durationMs(remote.cache_duration, `${at}.cache_duration`) || DEFAULT_JWKS_CACHE_MS,
    now: () => context.now(),
    log: (message) => context.log('warn', `${who}: ${message}`),
  });
  // async_fetch: fetch before the first request instead of on it.
  if (has(remote, 'async_fetch')) void source.keys();
  return source;
}

function checkHttpUrl(uri: string, field: string): void {
  let protocol: string;
  try {
    protocol = new URL(uri).protocol;
  } catch {
    return fail(field, `${JSON.stringify(uri)} is not a URL`);
  }
  if (protocol !== 'http:' && protocol !== 'https:') fail(field, `${JSON.stringify(uri)} is not an http(s) URL`);
}

/** envoy.config.core.v3.DataSource (bytes arrive base64-encoded from the decoder). */
function readDataSource(value: unknown, field: string): string {
  const source = asObject(value, field);
  const kind = oneofMember(source, ['inline_string', 'inline_bytes', 'filename'], field, ['environment_variable']);
  if (kind === 'inline_string') return asString(source.inline_string, `${field}.inline_string`);
  if (kind === 'inline_bytes') return Buffer.from(asString(source.inline_bytes, `${field}.inline_bytes`), 'base64').toString('utf8');
  const filename = requiredString(source.filename, `${field}.filename`);
  try {
    return fs.readFileSync(filename, 'utf8');
  } catch (err) {
    return fail(`${field}.filename`, `cannot read ${filename}: ${(err as Error).message}`);
  }
}

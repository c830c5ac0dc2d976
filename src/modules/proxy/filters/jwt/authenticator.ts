import type { ProxyHttpRequest } from '../../http/filter-api';
import { claimAt, claimHeaderValue, normalizePayload } from './claims';
import type { JwtLocation } from './extractor';
import { Jwks } from './jwks';
import type { AudienceCheck, JwtProvider } from './provider';
import { JwtStatus, Status } from './status';
import { checkTime, ParsedJwt, parseJwtCached } from './token';

/** One request's verification: what verifiers share while they run. */
export interface VerifyContext {
  readonly request: ProxyHttpRequest;
  readonly nowSeconds: number;
  /** Headers and payloads for `envoy.filters.http.jwt_authn` metadata, set once verification ends. */
  readonly extracted: Record<string, unknown>;
}

export interface AuthenticateOptions {
  readonly tokens: JwtLocation[];
  /** The required provider; absent under allow_missing / allow_missing_or_failed, where the token's issuer picks it. */
  readonly provider?: JwtProvider;
  readonly providers: readonly JwtProvider[];
  /** `provider_and_audiences`: replaces the provider's audiences. */
  readonly audiences?: AudienceCheck;
  readonly allowFailed: boolean;
  readonly allowMissing: boolean;
}

/**
 * Envoy's Authenticator: tokens are verified last-found first; every one must pass (a good
 * token must not smuggle a bad one to the upstream), except under allow_missing/allow_failed,
 * where all are tried and the last one decides (allow_failed: always OK).
 */
export async function authenticate(context: VerifyContext, options: AuthenticateOptions): Promise<JwtStatus> {
  const tokens = [...options.tokens];
  let status: JwtStatus = Status.JwtMissed;
  while (tokens.length > 0) {
    const location = tokens.pop()!;
    const { status: result, provider } = await verifyToken(context, location, options);
    status = result;
    if (status !== Status.Ok) recordFailure(context, provider ?? soleProvider(options), status);
    if (status !== Status.Ok && !options.allowFailed && !options.allowMissing) break;
  }
  if (options.allowFailed) return Status.Ok;
  if (options.allowMissing && status === Status.JwtMissed) return Status.Ok;
  return status;
}

function soleProvider(options: AuthenticateOptions): JwtProvider | undefined {
  return options.provider ?? (options.providers.length === 1 ? options.providers[0] : undefined);
}

function recordFailure(context: VerifyContext, provider: JwtProvider | undefined, status: JwtStatus): void {
  if (provider && provider.failedStatusInMetadata !== '') {
    context.extracted[provider.failedStatusInMetadata] = { code: status.code, message: status.message };
  }
}

/** The provider for a token's issuer when none is required: the first naming it, else the first naming none. */
function providerForIssuer(providers: readonly JwtProvider[], issuer: string): JwtProvider | undefined {
  return providers.find((p) => p.issuer !== '' && p.issuer === issuer) ?? providers.find((p) => p.issuer === '');
}

async function verifyToken(
  context: VerifyContext,
  location: JwtLocation,
  options: AuthenticateOptions,
): Promise<{ status: JwtStatus; provider?: JwtProvider }> {
  const parsed = parseJwtCached(location.token);
  if (!parsed.ok) return { status: parsed.status, provider: options.provider };
  const jwt = parsed.jwt;
  if (!location.issuerAllowed(jwt.iss)) return { status: Status.JwtUnknownIssuer, provider: options.provider };
  const provider = options.provider ?? providerForIssuer(options.providers, jwt.iss);
  if (!provider) return { status: Status.JwtUnknownIssuer };

  const status = await checkClaims(context, jwt, provider, options.audiences);
  if (status === Status.Ok) admit(context, location, jwt, provider);
  return { status, provider };
}

async function checkClaims(context: VerifyContext, jwt: ParsedJwt, provider: JwtProvider, audiences?: AudienceCheck): Promise<JwtStatus> {
  const timeStatus = checkTime(jwt, context.nowSeconds, provider.clockSkewSeconds);
  if (timeStatus !== Status.Ok) return timeStatus;
  if (provider.subjects && !provider.subjects(jwt.sub)) return Status.JwtVerificationFail;
  if (provider.maxLifetimeSeconds !== undefined) {
    if (jwt.exp === 0 || jwt.exp - context.nowSeconds > provider.maxLifetimeSeconds) return Status.JwtExpired;
  }
  if (!(audiences ?? provider.audiences).allows(jwt.audiences)) return Status.JwtAudienceNotAllowed;
  const keys = await provider.jwks.keys();
  if (!(keys instanceof Jwks)) return keys;
  return keys.verify(jwt);
}

/** Envoy's handling of a good token: payload and claim headers, token removal, metadata. */
function admit(context: VerifyContext, location: JwtLocation, jwt: ParsedJwt, provider: JwtProvider): void {
  const headers = context.request.headers;
  if (provider.forwardPayloadHeader !== '') {
    const payload = provider.padForwardPayloadHeader ? padBase64(jwt.payloadBase64Url) : jwt.payloadBase64Url;
    appendHeader(headers, provider.forwardPayloadHeader, payload);
  }
  for (const { claimName, headerName } of provider.claimToHeaders) {
    const value = claimHeaderValue(claimAt(jwt.payload, claimName));
    if (value !== undefined) appendHeader(headers, headerName, value);
  }
  if (!provider.forward) location.remove(headers);
  if (provider.headerInMetadata !== '') context.extracted[provider.headerInMetadata] = jwt.header;
  if (provider.payloadInMetadata !== '') {
    context.extracted[provider.payloadInMetadata] = normalizePayload(jwt.payload, provider.spaceDelimitedClaims);
  }
}

function appendHeader(headers: Record<string, string>, name: string, value: string): void {
  headers[name] = headers[name] === undefined ? value : `${headers[name]},${value}`;
}

function padBase64(text: string): string {
  const unpadded = text.replace(/=+$/, '');
  return unpadded + '='.repeat((4 - (unpadded.length % 4)) % 4);
}

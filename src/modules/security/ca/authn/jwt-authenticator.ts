/**
 * Bearer-token authentication of certificate requests: `authorization: Bearer <JWT>` in the
 * gRPC metadata, verified against the OIDC issuer TOKEN_ISSUER (its discovery document names
 * the key set) or, when that is unset, the key set of JWT_RULE. The token's `aud` must
 * contain one of TOKEN_AUDIENCES, and also one of JWT_RULE's `audiences` when the rule lists
 * some. The identity is the `sub` claim `system:serviceaccount:<ns>:<sa>`.
 */
import type { Metadata } from '@grpc/grpc-js';
import type { JWTPayload, JWTVerifyGetKey } from 'jose';
import { joseLibrary } from '../../../shared/jose-library';
import { httpGetText } from '../../authn/http-get';
import { AuthenticationError, messageOf } from '../errors';
import { Authenticator, CallCredentials, Caller } from './authenticator';
import { JwtRule } from './jwt-rule';
import { identityOfSubject } from './spiffe';

/** Where the keys that sign tokens come from. */
export type TokenKeySource = { kind: 'oidc'; issuer: string } | { kind: 'jwt-rule'; rule: JwtRule };

export interface JwtAuthenticatorOptions {
  trustDomain: string;
  /** TOKEN_AUDIENCES: a token's `aud` must contain one. */
  audiences: readonly string[];
  /** None: bearer tokens are refused, saying what to configure. */
  keys?: TokenKeySource;
  /** Milliseconds since the epoch, for `exp` / `nbf`. */
  now?: () => number;
  /** Deadline of each discovery and key-set fetch; 5 s by default. */
  fetchTimeoutMs?: number;
}

interface ResolvedKeys {
  readonly issuer: string;
  readonly getKey: JWTVerifyGetKey;
  readonly where: string;
}

const DISCOVERY_SUFFIX = '/.well-known/openid-configuration';

export class JwtAuthenticator implements Authenticator {
  readonly name = 'bearer JWT';
  private resolved: Promise<ResolvedKeys> | undefined;

  constructor(private readonly options: JwtAuthenticatorOptions) {
    if (options.audiences.length === 0) throw new Error('the JWT authenticator needs at least one accepted audience (TOKEN_AUDIENCES)');
  }

  async authenticate(call: CallCredentials): Promise<Caller | undefined> {
    const token = bearerToken(call.metadata);
    if (token === undefined) return undefined;
    if (!this.options.keys) throw new AuthenticationError('bearer tokens cannot be checked: neither TOKEN_ISSUER nor JWT_RULE is set');
    const keys = await this.keys();
    let payload: JWTPayload;
    try {
      ({ payload } = await joseLibrary().jwtVerify(token, keys.getKey, {
        issuer: keys.issuer,
        audience: [...this.options.audiences],
        currentDate: new Date((this.options.now ?? Date.now)()),
      }));
    } catch (err) {
      throw new AuthenticationError(explain(err, token, keys, this.options.audiences));
    }
    const ruleAudiences = this.options.keys.kind === 'jwt-rule' ? this.options.keys.rule.audiences : undefined;
    if (ruleAudiences && !audiencesOf(payload).some((aud) => ruleAudiences.includes(aud))) {
      throw new AuthenticationError(`the token's audience ${JSON.stringify(payload.aud)} matches none of JWT_RULE's audiences (${ruleAudiences.join(', ')})`);
    }
    return { identities: [identityOfSubject(payload.sub, this.options.trustDomain)], authenticator: this.name, nodeName: nodeNameOf(payload) };
  }

  /** The key set, resolved once; a failed discovery is retried by the next request. */
  private keys(): Promise<ResolvedKeys> {
    if (!this.resolved) {
      this.resolved = this.resolveKeys();
      this.resolved.catch(() => (this.resolved = undefined));
    }
    return this.resolved;
  }

  private async resolveKeys(): Promise<ResolvedKeys> {
    const source = this.options.keys!;
    const timeoutMs = this.options.fetchTimeoutMs ?? 5000;
    if (source.kind === 'jwt-rule') {
      const { rule } = source;
      if (rule.jwks) {
        try {
          return { issuer: rule.issuer, getKey: joseLibrary().createLocalJWKSet(JSON.parse(rule.jwks)), where: 'the inline key set of JWT_RULE' };
        } catch (err) {
          throw new AuthenticationError(`the inline key set of JWT_RULE is unusable: ${messageOf(err)}`);
        }
      }
      return { issuer: rule.issuer, getKey: joseLibrary().createRemoteJWKSet(new URL(rule.jwksUri!), { timeoutDuration: timeoutMs }), where: rule.jwksUri! };
    }
    const { issuer } = source;
    const discoveryUrl = `${issuer.replace(/\/+$/, '')}${DISCOVERY_SUFFIX}`;
    let jwksUri: string;
    try {
      const document = JSON.parse(await httpGetText(discoveryUrl, { timeoutMs, insecureSkipVerify: false })) as { issuer?: unknown; jwks_uri?: unknown };
      if (typeof document.jwks_uri !== 'string' || !URL.canParse(document.jwks_uri)) throw new Error('it names no valid "jwks_uri"');
      // OpenID Connect Discovery §4.3: the document must be the issuer's own.
      if (document.issuer !== issuer) throw new Error(`it is for issuer ${JSON.stringify(document.issuer)}, not ${issuer}`);
      jwksUri = document.jwks_uri;
    } catch (err) {
      throw new AuthenticationError(`cannot discover the keys of TOKEN_ISSUER ${issuer} from ${discoveryUrl}: ${messageOf(err)}`);
    }
    return { issuer, getKey: joseLibrary().createRemoteJWKSet(new URL(jwksUri), { timeoutDuration: timeoutMs }), where: jwksUri };
  }
}

/** The token of `authorization: Bearer <token>`; undefined when the call has no authorization metadata. */
export function bearerToken(metadata: Metadata): string | undefined {
  const value = metadata.get('authorization').find((v): v is string => typeof v === 'string');
  if (value === undefined) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(value);
  if (!match) throw new AuthenticationError('the authorization metadata is not "Bearer <token>"');
  return match[1];
}

function audiencesOf(payload: JWTPayload): string[] {
  return typeof payload.aud === 'string' ? [payload.aud] : (payload.aud ?? []);
}

/** The claim `{"kubernetes.io": {"node": {"name": ...}}}` of projected service-account tokens. */
function nodeNameOf(payload: JWTPayload): string | undefined {
  const orch = payload['kubernetes.io'] as { node?: { name?: unknown } } | undefined;
  const name = orch?.node?.name;
  return typeof name === 'string' && name !== '' ? name : undefined;
}

/** Says which check a token failed, in words (jose's codes are stable; its messages vary). */
function explain(err: unknown, token: string, keys: ResolvedKeys, audiences: readonly string[]): string {
  const code = (err as { code?: string }).code;
  const claims = safely(() => joseLibrary().decodeJwt(token)) ?? {};
  switch (code) {
    case 'ERR_JWT_EXPIRED':
      return `the token expired${typeof claims.exp === 'number' ? ` at ${new Date(claims.exp * 1000).toISOString()}` : ''}`;
    case 'ERR_JWT_CLAIM_VALIDATION_FAILED': {
      const claim = (err as { claim?: string }).claim;
      if (claim === 'iss') return `the token's issuer ${JSON.stringify(claims.iss)} is not the expected ${keys.issuer}`;
      if (claim === 'aud') return `the token's audience ${JSON.stringify(claims.aud)} matches none of the accepted audiences (TOKEN_AUDIENCES: ${audiences.join(', ')})`;
      if (claim === 'nbf') return `the token is not valid yet (nbf ${JSON.stringify(claims.nbf)})`;
      return `the token's "${claim}" claim is invalid: ${messageOf(err)}`;
    }
    case 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED':
      return `the token's signature does not verify with the keys of ${keys.where}`;
    case 'ERR_JWKS_NO_MATCHING_KEY': {
      const kid = safely(() => joseLibrary().decodeProtectedHeader(token).kid);
      return `the token's signature does not verify: no key of ${keys.where} matches it${kid ? ` (kid ${kid})` : ''}`;
    }
    case 'ERR_JWKS_TIMEOUT':
      return `fetching the key set ${keys.where} timed out`;
    case 'ERR_JWT_INVALID':
    case 'ERR_JWS_INVALID':
      return `the token is malformed: ${messageOf(err)}`;
    default:
      return `the token does not verify: ${messageOf(err)}`;
  }
}

function safely<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch {
    return undefined;
  }
}

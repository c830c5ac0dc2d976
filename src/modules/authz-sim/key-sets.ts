/**
 * The key sets the simulated proxy verifies tokens with, written into the RequestAuthentication
 * rules (`jwks`) as the daemon inlines the key sets it fetched: fetched by the daemon's own
 * resolver, or read from `--jwks`. Claims given without a token (`--claims`) are signed here with
 * a key of the simulator's own, added to the key sets of their issuer only in this simulation,
 * so the proxy's filter checks everything but the signature (the answer says "unverified").
 */
import type { JWK, KeyLike } from 'jose';
import { ConfigResource } from '../config';
import { JwtRule, RequestAuthenticationSpec } from '../config/kinds/request-authentication';
import { ConfigSnapshot } from '../config/store';
import { JwksResolver, JwksResolverLogger, KeySetLocation, ruleTimeout } from '../security/authn';
import { joseLibrary } from '../shared/jose-library';
import { usage } from './request';

const SIMULATOR_KID = 'meshctl-simulate';

/** A key of the simulator's own, trusted only by the simulated proxy, for claims given without a token. */
export class ClaimsSigner {
  private constructor(private readonly key: KeyLike, readonly jwk: JWK) {}

  static async create(): Promise<ClaimsSigner> {
    const jose = joseLibrary();
    const { publicKey, privateKey } = await jose.generateKeyPair('ES256');
    return new ClaimsSigner(privateKey, { ...(await jose.exportJWK(publicKey)), kid: SIMULATOR_KID, alg: 'ES256', use: 'sig' });
  }

  sign(claims: Record<string, unknown>, issuer: string): Promise<string> {
    return new (joseLibrary().SignJWT)({ ...claims, iss: issuer }).setProtectedHeader({ alg: 'ES256', kid: SIMULATOR_KID, typ: 'JWT' }).sign(this.key);
  }
}

export interface KeySetOptions {
  /** `--jwks`: the key set of every rule whose keys would be fetched. */
  jwks?: string;
  /** The simulator's key joins the key sets of rules of these issuers. */
  signer?: { key: ClaimsSigner; issuers: ReadonlySet<string> };
  /** Where fetch failures are said (the rule's tokens then fail, as the proxy's would). */
  logger: JwksResolverLogger;
}

/** The snapshot with every jwtRule's key set written in. */
export async function withKeySets(config: ConfigSnapshot, options: KeySetOptions): Promise<ConfigSnapshot> {
  const policies = (config.get('RequestAuthentication') ?? []) as ConfigResource<RequestAuthenticationSpec>[];
  if (policies.length === 0) return config;
  if (options.jwks !== undefined) checkJwks(options.jwks);
  const resolver = new JwksResolver({ refreshIntervalMs: 3_600_000, insecureSkipVerify: false, logger: options.logger });
  const location = (rule: JwtRule): KeySetLocation => ({ jwksUri: rule.jwksUri, issuer: rule.issuer, timeoutMs: ruleTimeout(rule).milliseconds });
  try {
    if (options.jwks === undefined) {
      await resolver.want(policies.flatMap((p) => (p.spec.jwtRules ?? []).filter((r) => r.jwks === undefined).map(location)));
    }
    const keySetOf = (rule: JwtRule): string => {
      const base = rule.jwks ?? options.jwks ?? resolver.keySet(location(rule));
      const signer = options.signer;
      if (!signer || !signer.issuers.has(rule.issuer ?? '')) return base;
      const parsed = JSON.parse(base) as { keys?: unknown[] };
      return JSON.stringify({ ...parsed, keys: [...(Array.isArray(parsed.keys) ? parsed.keys : []), signer.key.jwk] });
    };
    const rewritten = policies.map((p) => ({ ...p, spec: { ...p.spec, jwtRules: (p.spec.jwtRules ?? []).map((r) => ({ ...r, jwks: keySetOf(r), jwksUri: undefined })) } }));
    return new Map([...config, ['RequestAuthentication', rewritten]]);
  } finally {
    resolver.stop();
  }
}

function checkJwks(text: string): void {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw usage(`--jwks: not JSON: ${(err as Error).message}`);
  }
  const keys = (parsed as { keys?: unknown })?.keys;
  if (!Array.isArray(keys)) throw usage('--jwks: expected a JSON Web Key Set: an object with a "keys" list');
}

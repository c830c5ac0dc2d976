/**
 * The CA's options from the settings (spec/01): CA_*, DEFAULT_WORKLOAD_CERT_TTL,
 * MAX_WORKLOAD_CERT_TTL, ROOT_CA_DIR, TOKEN_AUDIENCES, TOKEN_ISSUER, JWT_RULE,
 * CA_TRUSTED_NODE_ACCOUNTS. Values the type check lets through but the CA cannot use are
 * errors naming the setting.
 */
import { DEFAULT_MESH_CONFIG } from '../../mesh-config/values';
import { Settings } from '../../settings';
import { CertificateAuthorityOptions } from './authority';
import { TokenKeySource } from './authn/jwt-authenticator';
import { parseJwtRule } from './authn/jwt-rule';
import { IdentitiesOnNode, NodeAccount, parseNodeAccounts } from './authn/node-authorizer';
import { CaLogger } from './logger';

/** What the settings do not say: supplied by the daemon (or a test). */
export interface CaOverrides {
  /**
   * The mesh's trust domain (mesh config); `cluster.local` by default. A function is read at
   * each request, so identities follow a trust domain that changes while the CA runs.
   */
  trustDomain?: string | (() => string);
  /** Where a self-signed root is persisted. */
  persistDir?: string;
  /** Which identities run on a node (the daemon's registry), for node authorization. */
  identitiesOnNode?: IdentitiesOnNode;
  now?: () => number;
  random?: () => number;
  logger?: CaLogger;
  rotatorLogger?: CaLogger;
}

export interface CaOptions {
  readonly authority: CertificateAuthorityOptions;
  readonly authentication: {
    readonly trustDomain: string;
    /** TOKEN_AUDIENCES. */
    readonly audiences: string[];
    /** TOKEN_ISSUER when set, else JWT_RULE when set, else none (bearer tokens are refused). */
    readonly keys?: TokenKeySource;
    readonly now?: () => number;
  };
  readonly nodeAuthorization: {
    readonly trustDomain: string;
    /** CA_TRUSTED_NODE_ACCOUNTS. */
    readonly trustedNodeAccounts: NodeAccount[];
    readonly identitiesOnNode?: IdentitiesOnNode;
  };
}

/** Without a trust domain given: the mesh config's default. */
export const DEFAULT_TRUST_DOMAIN = DEFAULT_MESH_CONFIG.trustDomain;

/** @throws Error naming the setting whose value the CA cannot use. */
export function caOptionsFrom(settings: Settings, overrides: CaOverrides = {}): CaOptions {
  const given = overrides.trustDomain ?? DEFAULT_TRUST_DOMAIN;
  const currentTrustDomain = typeof given === 'function' ? given : () => given;
  const trustDomain = currentTrustDomain();
  if (trustDomain === '' || /[/\s]/.test(trustDomain)) throw new Error(`trust domain "${trustDomain}" is not a valid SPIFFE trust domain`);

  const positiveMs = (name: 'CA_SELF_SIGNED_CA_CERT_TTL' | 'DEFAULT_WORKLOAD_CERT_TTL' | 'MAX_WORKLOAD_CERT_TTL') => {
    const duration = settings.duration(name);
    if (duration.nanos <= 0n) throw new Error(`${name} must be positive, got ${duration.toString()}`);
    return duration.milliseconds;
  };
  const rsaKeySize = settings.int('CA_SELF_SIGNED_CA_RSA_KEY_SIZE');
  if (rsaKeySize < 2048 || rsaKeySize > 8192 || rsaKeySize % 8 !== 0) {
    throw new Error(`CA_SELF_SIGNED_CA_RSA_KEY_SIZE must be a multiple of 8 from 2048 to 8192, got ${rsaKeySize}`);
  }
  const grace = settings.int('CA_SELF_SIGNED_ROOT_CERT_GRACE_PERIOD_PERCENTILE');
  if (grace < 0 || grace > 100) throw new Error(`CA_SELF_SIGNED_ROOT_CERT_GRACE_PERIOD_PERCENTILE must be from 0 to 100, got ${grace}`);

  const audiences = splitList(settings.string('TOKEN_AUDIENCES'));
  if (audiences.length === 0) throw new Error('TOKEN_AUDIENCES is empty: no token could be accepted');

  const authority: CertificateAuthorityOptions = {
    trustDomain,
    rootCaDir: settings.string('ROOT_CA_DIR') || undefined,
    persistDir: overrides.persistDir,
    selfSigned: { rsaKeySize, ttlMs: positiveMs('CA_SELF_SIGNED_CA_CERT_TTL') },
    workloadCertTtl: { defaultMs: positiveMs('DEFAULT_WORKLOAD_CERT_TTL'), maxMs: positiveMs('MAX_WORKLOAD_CERT_TTL') },
    rotation: {
      checkIntervalMs: settings.duration('CA_SELF_SIGNED_ROOT_CERT_CHECK_INTERVAL').milliseconds,
      gracePeriodPercentile: grace,
      jitter: settings.bool('CA_ENABLE_JITTER_FOR_ROOT_CERT_ROTATOR'),
    },
    now: overrides.now,
    random: overrides.random,
    logger: overrides.logger,
    rotatorLogger: overrides.rotatorLogger,
  };
  return {
    authority,
    authentication: {
      get trustDomain() {
        return currentTrustDomain();
      },
      audiences,
      keys: tokenKeySource(settings),
      now: overrides.now,
    },
    nodeAuthorization: {
      get trustDomain() {
        return currentTrustDomain();
      },
      trustedNodeAccounts: parseNodeAccounts(settings.string('CA_TRUSTED_NODE_ACCOUNTS')),
      identitiesOnNode: overrides.identitiesOnNode,
    },
  };
}

function tokenKeySource(settings: Settings): TokenKeySource | undefined {
  const issuer = settings.string('TOKEN_ISSUER').trim();
  if (issuer) {
    const scheme = URL.canParse(issuer) ? new URL(issuer).protocol : '';
    if (scheme !== 'https:' && scheme !== 'http:') throw new Error(`TOKEN_ISSUER "${issuer}" is not an http(s) URL`);
    return { kind: 'oidc', issuer };
  }
  const rule = settings.string('JWT_RULE').trim();
  return rule ? { kind: 'jwt-rule', rule: parseJwtRule(rule, 'JWT_RULE') } : undefined;
}

function splitList(text: string): string[] {
  return text
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
}

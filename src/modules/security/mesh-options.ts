/**
 * The security services' options, mapped from the settings and the mesh config: what the
 * security module binds to the option tokens (one class per service).
 */
import { inject, injectable, named } from 'inversify';
import { Logging, LoggingToken } from '../logging';
import { MeshConfig } from '../mesh-config';
import { DaemonMetrics } from '../monitoring';
import { Settings, SettingsToken } from '../settings';
import { DaemonKeySetsOptions, JwksFetchMode, JwksResolverLogger, JwksResolverObserver, keySetSettingsFrom } from './authn';
import { AuthzContributorOptions, AuthzLog } from './authz';
import { AuthzMetrics } from './authz-metrics';
import { CaOptions, CaOverrides, caOptionsFrom } from './ca';
import { MeshTlsAlpnContributor, MtlsOptions } from './mtls';
import { ContributionProvider } from '../plugins/contribution-provider';

/** PILOT_JWT_* settings (AuthnSettingError when unusable), fetches counted in the daemon's metrics. */
@injectable()
export class KeySetOptionsFromSettings implements DaemonKeySetsOptions {
  readonly mode: JwksFetchMode;
  readonly refreshIntervalMs: number;
  readonly insecureSkipVerify: boolean;
  readonly observer: JwksResolverObserver;
  readonly logger: JwksResolverLogger;

  constructor(@inject(SettingsToken) settings: Settings, @inject(LoggingToken) logging: Logging, @inject(DaemonMetrics) metrics: DaemonMetrics) {
    const { mode, refreshIntervalMs, insecureSkipVerify } = keySetSettingsFrom(settings);
    this.mode = mode;
    this.refreshIntervalMs = refreshIntervalMs;
    this.insecureSkipVerify = insecureSkipVerify;
    this.observer = { fetched: (ok) => (ok ? metrics.jwksFetchSuccess : metrics.jwksFetchFail).inc() };
    this.logger = logging.scope('authn');
  }
}

/**
 * RBAC principals in the mesh's trust domain and its aliases, and the extension providers
 * CUSTOM policies name, read live from the mesh config; skipped rules logged under `authorization`.
 */
@injectable()
export class MeshAuthzOptions implements AuthzContributorOptions {
  readonly log: AuthzLog;

  constructor(
    @inject(MeshConfig) private readonly mesh: MeshConfig,
    @inject(LoggingToken) logging: Logging,
    @inject(AuthzMetrics) readonly extAuthzObserver: AuthzMetrics,
  ) {
    this.log = logging.scope('authorization');
  }

  get trustDomain(): string {
    return this.mesh.current().trustDomain;
  }

  get trustDomainAliases(): readonly string[] {
    return this.mesh.current().trustDomainAliases;
  }
}

/** The live mesh config's trustDomain, enableAutoMtls and meshMTLS; the ALPN protocols enabled plugins offer on mesh mTLS. */
@injectable()
export class MeshMtlsOptions implements MtlsOptions {
  readonly leadingAlpns: readonly string[];

  constructor(
    @inject(MeshConfig) private readonly mesh: MeshConfig,
    @inject(ContributionProvider) @named(MeshTlsAlpnContributor) alpns: ContributionProvider<MeshTlsAlpnContributor>,
  ) {
    this.leadingAlpns = [...new Set(alpns.getContributions().flatMap((c) => c.meshTlsAlpns))];
  }

  get trustDomain(): string {
    return this.mesh.current().trustDomain;
  }

  get enableAutoMtls(): boolean {
    return this.mesh.current().enableAutoMtls;
  }

  /** `meshMTLS.minProtocolVersion`: TLS_AUTO means TLS 1.2, as the incumbent reads it. */
  get minProtocolVersion(): 'TLSV1_2' | 'TLSV1_3' {
    return this.mesh.current().meshMTLS.minProtocolVersion === 'TLSV1_3' ? 'TLSV1_3' : 'TLSV1_2';
  }
}

/**
 * The CA's options from the settings, in the mesh's trust domain, followed live (a changed
 * trustDomain names the certificates issued from then on). Read when the CA starts, so a
 * daemon without a CA (ENABLE_CA_SERVER=false) never trips over CA settings.
 */
@injectable()
export class DaemonCaSettings {
  constructor(
    @inject(SettingsToken) private readonly settings: Settings,
    @inject(MeshConfig) private readonly mesh: MeshConfig,
  ) {}

  /** @throws Error naming the setting whose value the CA cannot use. */
  options(overrides: Omit<CaOverrides, 'trustDomain'> = {}): CaOptions {
    return caOptionsFrom(this.settings, { ...overrides, trustDomain: () => this.mesh.current().trustDomain });
  }
}

/**
 * The daemon's security plumbing (issue 5): its CA (ENABLE_CA_SERVER), its own serving
 * certificate (PILOT_CERT_PROVIDER=meshd, or --tlsCertFile/--tlsKeyFile/--caCertFile), the
 * TLS gRPC address carrying xDS and the CA, client authentication on xDS (XDS_AUTH,
 * XDS_AUTH_PLAINTEXT, PILOT_ENABLE_XDS_IDENTITY_CHECK), and publication of the mesh roots.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { X509Certificate } from 'node:crypto';
import { inject, injectable } from 'inversify';
import { Logging, LoggingToken, ScopedLogger } from '../logging';
import { DaemonMetrics } from '../monitoring';
import { OrchServiceRegistry } from '../registry';
import { DaemonCaSettings } from '../security';
import { spiffeId } from '../security/mtls/identity';
import { authenticateCall, Authenticator, authenticatorsFor, CaMetrics, CaOptions, caServiceDefinition, certificateServiceFor, MeshCertificateAuthority, parseSpiffeId } from '../security/ca';
import { RotatingServerCredentials, rotatingServerCredentials, ServerKeyMaterial } from '../security/tls/server-credentials';
import { Settings, SettingsToken } from '../settings';
import { PUBLISHED_ROOTS_PATH } from '../security/published-roots';
import { daemonServiceName } from '../security/daemon-identity';
import { UserError } from '../shared/user-error';
import { XdsListener } from '../xds/server';
import { XdsStreamAuth, xdsStreamAuth } from '../xds/stream-auth';
import type { Registry } from '../shared/prom-client';
import { DaemonFlags, DaemonFlagsToken, DaemonTlsFlags, DaemonTlsFlagsToken } from './daemon-flags';
import { systemNamespaceOf } from './orch-options';

/** The CA or the daemon's certificate cannot be set up as configured. */
export class DaemonSecurityError extends UserError {}

/** Where a self-signed root is kept across restarts. */
export const SELF_SIGNED_CA_DIR = './var/lib/meshd/ca';

@injectable()
export class DaemonSecurity {
  private ca: MeshCertificateAuthority | undefined;
  private caOptions: CaOptions | undefined;
  private caServiceImpl: grpc.UntypedServiceImplementation | undefined;
  private authenticators: Authenticator[] = [];
  private credentials: RotatingServerCredentials | undefined;
  private material: ServerKeyMaterial | undefined;
  private renewTimer: NodeJS.Timeout | undefined;
  private readonly unsubscribe: Array<() => void> = [];
  private readonly certListeners = new Set<(m: ServerKeyMaterial) => void>();
  private readonly rootListeners = new Set<() => void>();

  private readonly log: ScopedLogger;
  private readonly registry: Registry;

  constructor(
    @inject(SettingsToken) private readonly settings: Settings,
    @inject(DaemonTlsFlagsToken) private readonly flags: DaemonTlsFlags,
    @inject(DaemonCaSettings) private readonly caSettings: DaemonCaSettings,
    @inject(LoggingToken) logging: Logging,
    @inject(DaemonMetrics) metrics: DaemonMetrics,
    @inject(OrchServiceRegistry) private readonly orchRegistry: OrchServiceRegistry,
    @inject(DaemonFlagsToken) private readonly daemonFlags: DaemonFlags,
  ) {
    this.log = logging.scope('security');
    this.registry = metrics.registry;
  }

  /** Creates the CA and the serving certificate; undefined material = no TLS address (spec: other providers distribute roots only). */
  async start(): Promise<void> {
    if (this.flags.ciphers.insecure.length) this.log.warn(`--tls-cipher-suites: ${this.flags.ciphers.insecure.join(', ')} are insecure`);
    if (this.settings.bool('ENABLE_CA_SERVER')) await this.startCa();
    else this.log.info('ENABLE_CA_SERVER=false: no CA server');
    this.material = await this.servingMaterial();
    if (this.material) this.credentials = rotatingServerCredentials(this.material, this.flags.ciphers.ciphers);
    this.publishRoots();
  }

  stop(): void {
    if (this.renewTimer) clearTimeout(this.renewTimer);
    for (const u of this.unsubscribe.splice(0)) u();
    this.ca?.stop();
  }

  /** The TLS gRPC listener (xDS and, with a CA, CreateCertificate); undefined when the daemon has no certificate. */
  secureListener(host: string, port: number): XdsListener | undefined {
    if (!this.credentials) return undefined;
    return {
      host,
      port,
      credentials: this.credentials,
      auth: this.settings.bool('XDS_AUTH') ? this.xdsAuth() : undefined,
      services: this.ca ? [{ definition: caServiceDefinition(), implementation: this.caService() }] : [],
    };
  }

  /** Plain-text xDS authenticates callers only with XDS_AUTH_PLAINTEXT (trusted networks otherwise). */
  plaintextAuth(): XdsStreamAuth | undefined {
    return this.settings.bool('XDS_AUTH') && this.settings.bool('XDS_AUTH_PLAINTEXT') ? this.xdsAuth() : undefined;
  }

  /** The serving certificate for the HTTPS address, and its renewals. */
  servingCertificate(): ServerKeyMaterial | undefined {
    return this.material;
  }

  onServingCertificate(listener: (m: ServerKeyMaterial) => void): void {
    this.certListeners.add(listener);
  }

  rootsPem(): string {
    return this.ca ? this.ca.rootCertificates().join('') : this.flags.caCertFile ? fs.readFileSync(this.flags.caCertFile, 'utf8') : '';
  }

  /**
   * The roots that verify the HTTPS address's certificate, which the webhook configurations
   * carry as caBundle: the mounted --caCertFile with mounted certificates, else the mesh roots.
   */
  servingRootsPem(): string {
    if (this.flags.tlsCertFile && this.flags.caCertFile) return fs.readFileSync(this.flags.caCertFile, 'utf8');
    return this.rootsPem();
  }

  /** Called after the mesh roots change (root rotation), once they are published; returns the unsubscribe. */
  onRootsChanged(listener: () => void): () => void {
    this.rootListeners.add(listener);
    return () => this.rootListeners.delete(listener);
  }

  private async startCa(): Promise<void> {
    let options: CaOptions | undefined;
    try {
      // CA_TRUSTED_NODE_ACCOUNTS: which identities run on a node is the Orch registry's pod index.
      const registry = this.orchRegistry;
      const identitiesOnNode = registry.running
        ? (node: string) => new Set([...registry.serviceAccountsOnNode(node)].map((a) => spiffeId(options!.nodeAuthorization.trustDomain, ...(a.split('/') as [string, string]))))
        : undefined;
      options = this.caSettings.options({ persistDir: SELF_SIGNED_CA_DIR, logger: this.log, rotatorLogger: this.log, identitiesOnNode });
    } catch (err) {
      throw new DaemonSecurityError((err as Error).message);
    }
    try {
      this.ca = await MeshCertificateAuthority.create(options.authority);
    } catch (err) {
      throw new DaemonSecurityError(`CA: ${(err as Error).message}`);
    }
    const ca = this.ca;
    this.caOptions = options;
    this.authenticators = authenticatorsFor(ca, options);
    this.log.info(`CA ready (${ca.mode}); root valid until ${ca.rootExpiry().toISOString()}`);
    this.unsubscribe.push(
      ca.onRootsChanged(() => {
        this.log.info('the mesh roots changed: publishing them and renewing the daemon certificate');
        this.publishRoots();
        void this.renewServing();
        for (const l of this.rootListeners) l();
      }),
    );
  }

  private caService(): grpc.UntypedServiceImplementation {
    if (!this.caServiceImpl) {
      this.caServiceImpl = certificateServiceFor(this.ca!, this.caOptions!, { metrics: new CaMetrics(this.registry), logger: this.log });
    }
    return this.caServiceImpl;
  }

  private xdsAuth(): XdsStreamAuth {
    return xdsStreamAuth({
      authenticators: [async (call) => ({ identities: (await authenticateCall(this.authenticators, call)).identities })],
      identityCheck: this.settings.bool('PILOT_ENABLE_XDS_IDENTITY_CHECK'),
      namespaceOf: (identity) => parseSpiffeId(identity)?.namespace,
    });
  }

  /** Mounted files win; else the CA signs one when PILOT_CERT_PROVIDER is meshd. */
  private async servingMaterial(): Promise<ServerKeyMaterial | undefined> {
    const { tlsCertFile, tlsKeyFile, caCertFile } = this.flags;
    if (tlsCertFile || tlsKeyFile) {
      if (!tlsCertFile || !tlsKeyFile) throw new DaemonSecurityError('--tlsCertFile and --tlsKeyFile go together: set both or neither');
      const read = (file: string, flag: string) => {
        try {
          return fs.readFileSync(file, 'utf8');
        } catch (err) {
          throw new DaemonSecurityError(`${flag}: cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
        }
      };
      const material = { keyPem: read(tlsKeyFile, '--tlsKeyFile'), certChainPem: read(tlsCertFile, '--tlsCertFile'), rootsPem: '' };
      material.rootsPem = [caCertFile ? read(caCertFile, '--caCertFile') : '', this.ca?.rootCertificates().join('') ?? ''].join('');
      try {
        new X509Certificate(material.certChainPem);
      } catch (err) {
        throw new DaemonSecurityError(`--tlsCertFile: ${tlsCertFile} is not a PEM certificate (${(err as Error).message})`);
      }
      this.log.info(`serving with the certificate in ${tlsCertFile}`);
      return material;
    }
    const provider = this.settings.string('PILOT_CERT_PROVIDER');
    if (provider !== 'meshd') {
      this.log.warn(`PILOT_CERT_PROVIDER=${provider}: no daemon certificate is generated; the TLS addresses are not served`);
      return undefined;
    }
    if (!this.ca) {
      this.log.warn('PILOT_CERT_PROVIDER=meshd needs the CA (ENABLE_CA_SERVER=false): the TLS addresses are not served');
      return undefined;
    }
    return this.issueServing();
  }

  private dnsNames(): string[] {
    const custom = (this.settings.string('MESHD_CUSTOM_HOST') ?? '')
      .split(',')
      .map((h) => h.trim())
      .filter((h) => h !== '');
    // The daemon's own namespace (--namespace, else POD_NAMESPACE) is the system namespace.
    return [...new Set([daemonServiceName(systemNamespaceOf(this.daemonFlags, this.settings)), ...custom])];
  }

  private async issueServing(): Promise<ServerKeyMaterial> {
    const ca = this.ca!;
    const ttlMs = this.settings.duration('DEFAULT_WORKLOAD_CERT_TTL').milliseconds;
    const cert = await ca.issueServerCertificate(this.dnsNames(), ttlMs);
    const leaf = new X509Certificate(cert.certChainPem);
    const from = Date.parse(leaf.validFrom);
    const to = Date.parse(leaf.validTo);
    // Renew at half of the lifetime, as workloads do.
    if (this.renewTimer) clearTimeout(this.renewTimer);
    this.renewTimer = setTimeout(() => void this.renewServing(), Math.max(1000, from + (to - from) / 2 - Date.now()));
    this.renewTimer.unref();
    this.log.info(`daemon certificate for ${this.dnsNames().join(', ')} valid until ${new Date(to).toISOString()}`);
    return { keyPem: cert.keyPem, certChainPem: cert.certChainPem, rootsPem: ca.rootCertificates().join('') };
  }

  private async renewServing(): Promise<void> {
    if (!this.ca || this.flags.tlsCertFile) {
      // Mounted certificates are the operator's; the roots for client certificates still follow the CA.
      if (this.material && this.credentials && this.ca) {
        this.material = { ...this.material, rootsPem: [this.flags.caCertFile ? fs.readFileSync(this.flags.caCertFile, 'utf8') : '', this.ca.rootCertificates().join('')].join('') };
        this.credentials.update(this.material);
      }
      return;
    }
    try {
      this.material = await this.issueServing();
      this.credentials?.update(this.material);
      for (const l of this.certListeners) l(this.material);
    } catch (err) {
      this.log.error(`renewing the daemon certificate failed: ${(err as Error).message}`);
    }
  }

  /** Written whole then renamed, so an agent never reads half a bundle. */
  private publishRoots(): void {
    const roots = this.rootsPem();
    if (!roots) return;
    try {
      fs.mkdirSync(path.dirname(PUBLISHED_ROOTS_PATH), { recursive: true });
      const tmp = `${PUBLISHED_ROOTS_PATH}.tmp`;
      fs.writeFileSync(tmp, roots);
      fs.renameSync(tmp, PUBLISHED_ROOTS_PATH);
      this.log.info(`published the mesh roots to ${path.resolve(PUBLISHED_ROOTS_PATH)}`);
    } catch (err) {
      this.log.error(`cannot publish the mesh roots to ${PUBLISHED_ROOTS_PATH}: ${(err as Error).message}`);
    }
  }
}

/**
 * The mesh's certificate authority: a plugged-in CA from ROOT_CA_DIR when its files are
 * there, else a self-signed root (persisted, rotated near expiry). It signs workload
 * certificates for identities the caller proved (never those a CSR asks for), issues the
 * daemon's own TLS certificate, and publishes the trust bundle.
 */
import { CaMode, CaSource } from './ca-source';
import { Certificate } from './certificate';
import { publicKeyOfCsr } from './csr';
import { SignError } from './errors';
import { asX509Key, generateKeyPair, privateKeyToPem } from './keys';
import { issueLeaf } from './leaf';
import { WorkloadCertTtl, workloadLifetimeMs } from './lifetime';
import { CaLogger, SILENT_LOGGER } from './logger';
import { loadPluggedInCa, PluggedInCaSource } from './plugged-in';
import { RootRotator } from './rotator';
import { SelfSignedCa } from './self-signed-ca';
import { SigningChain } from './signing-chain';
import { RootsListener } from './trust-bundle';
import type * as x509 from '@peculiar/x509';
import { x509Library } from './x509';

export interface RootRotationOptions {
  /** CA_SELF_SIGNED_ROOT_CERT_CHECK_INTERVAL; zero or negative disables rotation. */
  checkIntervalMs: number;
  /** CA_SELF_SIGNED_ROOT_CERT_GRACE_PERIOD_PERCENTILE. */
  gracePeriodPercentile: number;
  /** CA_ENABLE_JITTER_FOR_ROOT_CERT_ROTATOR. */
  jitter: boolean;
}

export interface CertificateAuthorityOptions {
  /** The mesh's trust domain: the self-signed root's organization. */
  trustDomain: string;
  /** ROOT_CA_DIR: a plugged-in CA when it holds ca-cert.pem, ca-key.pem and root-cert.pem. */
  rootCaDir?: string;
  /** Where a self-signed root is kept across restarts; none = a new root each start. */
  persistDir?: string;
  selfSigned: {
    /** CA_SELF_SIGNED_CA_RSA_KEY_SIZE. */
    rsaKeySize: number;
    /** CA_SELF_SIGNED_CA_CERT_TTL. */
    ttlMs: number;
  };
  /** DEFAULT_WORKLOAD_CERT_TTL and MAX_WORKLOAD_CERT_TTL. */
  workloadCertTtl: WorkloadCertTtl;
  /** Rotation of the self-signed root (a plugged-in CA is never rotated here). */
  rotation: RootRotationOptions;
  /** Milliseconds since the epoch; tests move it. */
  now?: () => number;
  /** In [0, 1), for the rotator's jitter. */
  random?: () => number;
  /** The CA's log (scope `serverca` in the daemon). */
  logger?: CaLogger;
  /** The rotator's log (scope `rootcertrotator`); defaults to `logger`. */
  rotatorLogger?: CaLogger;
}

export interface SignRequest {
  /** PKCS#10 CSR, PEM: only its public key is used. */
  csrPem: string;
  /** The caller's proven identities: the certificate's only names. */
  identities: readonly string[];
  /** Requested lifetime in seconds; non-positive = DEFAULT_WORKLOAD_CERT_TTL. */
  ttlSeconds: number;
}

export interface SignResult {
  /** PEM certificates: the leaf first, then the CA's chain, ending with the root. */
  certChain: string[];
}

export interface ServerCertificate {
  /** PKCS#8 PEM of a new ECDSA P-256 key. */
  keyPem: string;
  /** The leaf, then the CA's chain ending with the root, concatenated PEM. */
  certChainPem: string;
}

export class MeshCertificateAuthority {
  private readonly now: () => number;
  private readonly logger: CaLogger;

  private constructor(
    private readonly options: CertificateAuthorityOptions,
    private readonly source: CaSource,
    private readonly rotator: RootRotator | undefined,
  ) {
    this.now = options.now ?? Date.now;
    this.logger = options.logger ?? SILENT_LOGGER;
  }

  /**
   * Loads or creates the CA's key material and starts the root rotator (self-signed only).
   * @throws CaConfigError naming the file or setting that is wrong.
   */
  static async create(options: CertificateAuthorityOptions): Promise<MeshCertificateAuthority> {
    const now = options.now ?? Date.now;
    const logger = options.logger ?? SILENT_LOGGER;
    const pluggedIn = options.rootCaDir ? await loadPluggedInCa(options.rootCaDir, now()) : undefined;
    if (pluggedIn) {
      logger.info(`using the plugged-in CA of ${options.rootCaDir}: signing certificate ${pluggedIn.signing.signingCert.subject}, ${pluggedIn.roots.length} root(s)`);
      return new MeshCertificateAuthority(options, new PluggedInCaSource(pluggedIn), undefined);
    }
    const selfSigned = await SelfSignedCa.create({
      trustDomain: options.trustDomain,
      rsaKeySize: options.selfSigned.rsaKeySize,
      ttlMs: options.selfSigned.ttlMs,
      persistDir: options.persistDir,
      now,
      logger,
    });
    const rotator = new RootRotator(selfSigned, {
      ...options.rotation,
      now,
      random: options.random,
      logger: options.rotatorLogger ?? logger,
    });
    rotator.start();
    return new MeshCertificateAuthority(options, selfSigned, rotator);
  }

  get mode(): CaMode {
    return this.source.mode;
  }

  get trustDomain(): string {
    return this.options.trustDomain;
  }

  /**
   * Signs the CSR's public key for `identities`.
   * @throws CsrParseError when the CSR does not parse or verify; SignError when signing fails.
   */
  async sign(request: SignRequest): Promise<SignResult> {
    const publicKey = await publicKeyOfCsr(request.csrPem);
    const lifetimeMs = workloadLifetimeMs(request.ttlSeconds, this.options.workloadCertTtl);
    const certChain = await this.issue(publicKey, request.identities, lifetimeMs);
    this.logger.debug(`issued a certificate for ${request.identities.join(', ')}`, { lifetimeSeconds: Math.round(lifetimeMs / 1000) });
    return { certChain };
  }

  /**
   * A certificate for the daemon's own TLS server, for `dnsNames` (IP addresses allowed),
   * with a new ECDSA P-256 key.
   * @throws SignError for no names, a non-positive lifetime or a signing failure.
   */
  async issueServerCertificate(dnsNames: readonly string[], ttlMs: number): Promise<ServerCertificate> {
    if (!(ttlMs > 0)) throw new SignError(`the server certificate lifetime must be positive, got ${ttlMs} ms`);
    const key = await generateKeyPair({ kind: 'ec', curve: 'P-256' });
    const publicKey = await x509Library().PublicKey.create(asX509Key(key.publicKey));
    const chain = await this.issue(publicKey, dnsNames, ttlMs);
    return { keyPem: await privateKeyToPem(key.privateKey), certChainPem: chain.join('') };
  }

  /** The trust bundle, PEM: the current root and, during a rotation overlap, the previous one. */
  rootCertificates(): string[] {
    return this.source.trust.pems();
  }

  /** Calls `listener` with the new roots after each change of the trust bundle; returns the unsubscribe function. */
  onRootsChanged(listener: RootsListener): () => void {
    return this.source.trust.onChange(listener);
  }

  /** The trust bundle, parsed (for verifying client certificates). */
  trustAnchors(): readonly Certificate[] {
    return this.source.trust.roots();
  }

  /** The CA's certificates between its leaves and the root (none for a self-signed root). */
  intermediates(): readonly Certificate[] {
    return this.source.signing().intermediates;
  }

  /** When the root currently signed under expires. */
  rootExpiry(): Date {
    return this.source.signing().root.notAfter;
  }

  /** When the first certificate of the CA's signing chain expires. */
  certChainExpiry(): Date {
    return this.source.signing().expiry;
  }

  /** Runs one rotation check now (what the rotator's timer does); true when it rotated. Self-signed only. */
  checkRootRotation(): Promise<boolean> {
    return this.rotator ? this.rotator.check() : Promise.resolve(false);
  }

  /** Stops the rotator's timers. */
  stop(): void {
    this.rotator?.stop();
  }

  private async issue(publicKey: x509.PublicKey, identities: readonly string[], lifetimeMs: number): Promise<string[]> {
    const signing: SigningChain = this.source.signing();
    const now = this.now();
    // A leaf never outlives a certificate of its chain: it would stop verifying before it expires.
    const chainExpiry = signing.expiry.getTime();
    if (chainExpiry <= now) throw new SignError(`the CA's signing chain expired at ${signing.expiry.toISOString()}`);
    const notAfter = Math.min(now + lifetimeMs, chainExpiry);
    const leaf = await issueLeaf(signing, { publicKey, identities, notBefore: new Date(now), notAfter: new Date(notAfter) });
    return [leaf.pem, ...signing.chain.map((cert) => cert.pem)];
  }
}

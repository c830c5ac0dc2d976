/**
 * TLS server credentials for a server that hosts the CA service: its own certificate, and
 * client certificates requested and verified against the CA's trust bundle when a client
 * presents one, but not required (a workload's first request has none; renewals do). The
 * trust bundle is followed: a root rotation reaches the TLS layer without a restart.
 *
 * grpc-js's `ServerCredentials.createSsl` can only require client certificates or ignore
 * them, and the call's auth context carries the peer certificate only when TLS verified it,
 * hence the certificate-provider credentials.
 */
import * as grpc from '@grpc/grpc-js';

type CertificateProvider = grpc.experimental.CertificateProvider;
type CaListener = grpc.experimental.CaCertificateUpdateListener;
type IdentityListener = grpc.experimental.IdentityCertificateUpdateListener;

/** What the credentials read from the CA. */
export interface TrustBundleSource {
  rootCertificates(): string[];
  onRootsChanged(listener: (roots: string[]) => void): () => void;
}

export interface ServerIdentity {
  /** PEM private key. */
  keyPem: string;
  /** PEM certificate chain, leaf first. */
  certChainPem: string;
}

export interface CaServerCredentials {
  readonly credentials: grpc.ServerCredentials;
  /** Serves a new certificate (a renewed one) on new connections. */
  setIdentity(identity: ServerIdentity): void;
}

class TrustBundleCertificateProvider implements CertificateProvider {
  private readonly caListeners = new Set<CaListener>();
  private readonly identityListeners = new Set<IdentityListener>();
  private unsubscribe: (() => void) | undefined;

  constructor(
    private readonly trust: TrustBundleSource,
    private identity: ServerIdentity,
  ) {}

  setIdentity(identity: ServerIdentity): void {
    this.identity = identity;
    for (const listener of this.identityListeners) listener(this.identityUpdate());
  }

  addCaCertificateListener(listener: CaListener): void {
    this.caListeners.add(listener);
    this.unsubscribe ??= this.trust.onRootsChanged(() => {
      for (const each of this.caListeners) each(this.caUpdate());
    });
    // Deferred: grpc-js registers its own watcher only after adding this listener.
    queueMicrotask(() => this.caListeners.has(listener) && listener(this.caUpdate()));
  }

  removeCaCertificateListener(listener: CaListener): void {
    this.caListeners.delete(listener);
    if (this.caListeners.size === 0) {
      this.unsubscribe?.();
      this.unsubscribe = undefined;
    }
  }

  addIdentityCertificateListener(listener: IdentityListener): void {
    this.identityListeners.add(listener);
    queueMicrotask(() => this.identityListeners.has(listener) && listener(this.identityUpdate()));
  }

  removeIdentityCertificateListener(listener: IdentityListener): void {
    this.identityListeners.delete(listener);
  }

  private caUpdate() {
    return { caCertificate: Buffer.from(this.trust.rootCertificates().join('')) };
  }

  private identityUpdate() {
    return { certificate: Buffer.from(this.identity.certChainPem), privateKey: Buffer.from(this.identity.keyPem) };
  }
}

export function createCaServerCredentials(trust: TrustBundleSource, identity: ServerIdentity): CaServerCredentials {
  const provider = new TrustBundleCertificateProvider(trust, identity);
  // grpc-js 1.14 declares (ca, identity, ...) but passes them on as (identity, ca, ...): one
  // provider serving both roles is right either way.
  const credentials = grpc.experimental.createCertificateProviderServerCredentials(provider, provider, false);
  return { credentials, setIdentity: (next) => provider.setIdentity(next) };
}

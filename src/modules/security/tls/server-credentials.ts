import * as grpc from '@grpc/grpc-js';

/** A server's key, chain and the roots its clients' certificates must chain to. */
export interface ServerKeyMaterial {
  keyPem: string;
  certChainPem: string;
  /** Roots for client certificates; clients without one are still admitted (they may use a token). */
  rootsPem: string;
}

/**
 * gRPC server TLS whose certificate can be replaced while the server runs (rotation), asking
 * clients for a certificate without requiring one: workloads renew with their certificate,
 * first-time callers authenticate with a token. Peer certificates are verified by the
 * authenticators, against the current roots, since TLS here does not reject unknown ones.
 */
export class RotatingServerCredentials extends grpc.ServerCredentials {
  constructor(material: ServerKeyMaterial, private readonly ciphers?: string) {
    super({ requestCert: true, rejectUnauthorized: false, ...(ciphers ? { ciphers } : {}) }, RotatingServerCredentials.context(material, ciphers));
  }

  update(material: ServerKeyMaterial): void {
    this.updateSecureContextOptions(RotatingServerCredentials.context(material, this.ciphers));
  }

  _equals(other: grpc.ServerCredentials): boolean {
    return other === this;
  }

  private static context(m: ServerKeyMaterial, ciphers?: string) {
    return { key: Buffer.from(m.keyPem), cert: Buffer.from(m.certChainPem), ca: Buffer.from(m.rootsPem), ...(ciphers ? { ciphers } : {}) };
  }
}

import type * as grpc from '@grpc/grpc-js';
import { grpcLibrary } from '../../shared/grpc-library';

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
export interface RotatingServerCredentials extends grpc.ServerCredentials {
  /** Serves `material` from the next handshake on. */
  update(material: ServerKeyMaterial): void;
}

export function rotatingServerCredentials(material: ServerKeyMaterial, ciphers?: string): RotatingServerCredentials {
  return new (rotatingClass())(material, ciphers);
}

type RotatingClass = new (material: ServerKeyMaterial, ciphers?: string) => RotatingServerCredentials;
let made: RotatingClass | undefined;

/** Made on first use: its base class is grpc-js's, which loads on first use (shared/grpc-library). */
function rotatingClass(): RotatingClass {
  return (made ??= (() => {
    class Rotating extends grpcLibrary().ServerCredentials {
      constructor(material: ServerKeyMaterial, private readonly ciphers?: string) {
        super({ requestCert: true, rejectUnauthorized: false, ...(ciphers ? { ciphers } : {}) }, Rotating.context(material, ciphers));
      }

      update(material: ServerKeyMaterial): void {
        this.updateSecureContextOptions(Rotating.context(material, this.ciphers));
      }

      _equals(other: grpc.ServerCredentials): boolean {
        return other === this;
      }

      private static context(m: ServerKeyMaterial, ciphers?: string) {
        return { key: Buffer.from(m.keyPem), cert: Buffer.from(m.certChainPem), ca: Buffer.from(m.rootsPem), ...(ciphers ? { ciphers } : {}) };
      }
    }
    return Rotating;
  })());
}

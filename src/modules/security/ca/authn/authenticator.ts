/**
 * How the CA learns who is calling. Each authenticator reads one kind of credential from the
 * gRPC call; one that finds no credential of its kind steps aside (undefined), one that finds
 * a bad credential says why (AuthenticationError). The first that succeeds wins.
 */
import type { Metadata } from '@grpc/grpc-js';
import type { PeerCertificate } from 'node:tls';
import { AuthenticationError, IdentityExtractionError } from '../errors';

/** The parts of a gRPC server call authenticators read (a ServerUnaryCall has them). */
export interface CallCredentials {
  readonly metadata: Metadata;
  getAuthContext?(): { sslPeerCertificate?: PeerCertificate } | null;
}

export interface Caller {
  /** The caller's identities (`spiffe://<td>/ns/<ns>/sa/<sa>`). */
  readonly identities: string[];
  /** Which authenticator recognized it. */
  readonly authenticator: string;
  /** The node the caller runs on, when its credential says (token claim `kubernetes.io.node.name`). */
  readonly nodeName?: string;
}

export interface Authenticator {
  readonly name: string;
  /**
   * The caller, or undefined when the call carries no credential of this kind.
   * @throws AuthenticationError (or IdentityExtractionError) when it carries a bad one.
   */
  authenticate(call: CallCredentials): Promise<Caller | undefined>;
}

/**
 * The caller according to the first authenticator that recognizes it.
 * @throws IdentityExtractionError when every presented credential verified but named no
 *   mesh identity; AuthenticationError otherwise, with every authenticator's reason.
 */
export async function authenticateCall(authenticators: readonly Authenticator[], call: CallCredentials): Promise<Caller> {
  const failures: AuthenticationError[] = [];
  for (const authenticator of authenticators) {
    try {
      const caller = await authenticator.authenticate(call);
      if (caller) return caller;
    } catch (err) {
      if (!(err instanceof AuthenticationError)) throw err;
      failures.push(err);
    }
  }
  if (failures.length === 0) {
    const kinds = authenticators.map((a) => a.name).join(', ') || 'none configured';
    throw new AuthenticationError(`no credential: the call carries none the CA accepts (${kinds})`);
  }
  const reasons = failures.map((failure) => failure.message).join('; ');
  if (failures.every((failure) => failure instanceof IdentityExtractionError)) throw new IdentityExtractionError(reasons);
  throw new AuthenticationError(reasons);
}

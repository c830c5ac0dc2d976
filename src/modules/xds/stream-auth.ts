import type * as grpc from '@grpc/grpc-js';
import { grpcLibrary } from '../shared/grpc-library';
import { Proxy } from '../model/proxy';

/** Refusal of an xDS stream, with the gRPC status the client sees. */
export class XdsAuthError extends Error {
  constructor(
    readonly code: grpc.status,
    message: string,
  ) {
    super(message);
  }
}

/** What authenticators read from a call: its metadata (tokens) and TLS peer (certificates). */
export type AuthenticatedCall = Pick<grpc.ServerUnaryCall<unknown, unknown>, 'metadata' | 'getAuthContext' | 'getPeer'>;

export interface XdsCaller {
  identities: string[];
}

/** Decides whether a stream's caller may receive config as `proxy`; throws XdsAuthError when not. */
export interface XdsStreamAuth {
  authorize(call: AuthenticatedCall, proxy: Proxy): Promise<XdsCaller | undefined>;
}

export type CallAuthenticator = (call: AuthenticatedCall) => Promise<XdsCaller>;

export interface XdsAuthPolicy {
  /** Tried in order; the first that succeeds names the caller (client certificate, then token). */
  authenticators: CallAuthenticator[];
  /** PILOT_ENABLE_XDS_IDENTITY_CHECK: a caller may only ask as a proxy of its own namespace. */
  identityCheck: boolean;
  /** The namespace an identity belongs to (undefined when it names none). */
  namespaceOf(identity: string): string | undefined;
}

/**
 * XDS_AUTH: every authenticator is tried and the errors of all are reported when none accepts;
 * then, with the identity check on, the proxy's namespace must be one of the caller's.
 */
export function xdsStreamAuth(policy: XdsAuthPolicy): XdsStreamAuth {
  return {
    async authorize(call, proxy) {
      const reasons: string[] = [];
      let caller: XdsCaller | undefined;
      for (const authenticate of policy.authenticators) {
        try {
          caller = await authenticate(call);
          break;
        } catch (err) {
          reasons.push((err as Error).message);
        }
      }
      if (!caller) {
        throw new XdsAuthError(grpcLibrary().status.UNAUTHENTICATED, `authentication failed: ${reasons.join('; ') || 'no credentials'}`);
      }
      if (policy.identityCheck) {
        const namespaces = caller.identities.map((id) => policy.namespaceOf(id)).filter((n): n is string => n !== undefined);
        if (!namespaces.includes(proxy.namespace)) {
          throw new XdsAuthError(
            grpcLibrary().status.PERMISSION_DENIED,
            `identity ${caller.identities.join(', ') || '(none)'} may not request config for namespace "${proxy.namespace}" (PILOT_ENABLE_XDS_IDENTITY_CHECK)`,
          );
        }
      }
      return caller;
    },
  };
}

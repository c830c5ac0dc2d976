/**
 * Client-certificate authentication (certificate renewal): the TLS peer certificate of the
 * call must chain to the CA's current trust bundle (through the CA's own intermediates, for a
 * plugged-in CA) and be valid now; its URI SANs are the caller's identities.
 *
 * The TLS layer may already have checked the chain, but against the roots it was configured
 * with; the check is repeated here against the trust bundle as it is now (rotation changes it).
 */
import type { PeerCertificate } from 'node:tls';
import { Certificate } from '../certificate';
import { AuthenticationError, IdentityExtractionError } from '../errors';
import { Authenticator, CallCredentials, Caller } from './authenticator';

/** What the CA trusts now. */
export interface TrustSource {
  trustAnchors(): readonly Certificate[];
  intermediates(): readonly Certificate[];
}

const MAX_CHAIN_LENGTH = 8;

export class ClientCertAuthenticator implements Authenticator {
  readonly name = 'client certificate';

  constructor(
    private readonly trust: TrustSource,
    private readonly now: () => number = Date.now,
  ) {}

  async authenticate(call: CallCredentials): Promise<Caller | undefined> {
    const peer = call.getAuthContext?.()?.sslPeerCertificate;
    if (!peer?.raw) return undefined;
    let leaf: Certificate;
    try {
      leaf = Certificate.fromDer(peer.raw, 'the client certificate');
    } catch (err) {
      throw new AuthenticationError((err as Error).message);
    }
    verifyChain(leaf, [...peerIssuers(peer), ...this.trust.intermediates()], this.trust.trustAnchors(), this.now());
    const identities = leaf.uriSans();
    if (identities.length === 0) throw new IdentityExtractionError('the client certificate has no URI subject alternative name to take the identity from');
    return { identities, authenticator: this.name };
  }
}

/**
 * Checks `leaf` chains to one of `anchors` through `intermediates`, every certificate valid at `now`.
 * @throws AuthenticationError saying where the chain breaks.
 */
export function verifyChain(leaf: Certificate, intermediates: readonly Certificate[], anchors: readonly Certificate[], now: number): void {
  let current = leaf;
  for (let depth = 0; depth < MAX_CHAIN_LENGTH; depth++) {
    const what = depth === 0 ? 'the client certificate' : `its issuer ${current.subject || '(empty subject)'}`;
    if (now > current.notAfter.getTime()) throw new AuthenticationError(`${what} expired at ${current.notAfter.toISOString()}`);
    if (now < current.notBefore.getTime()) throw new AuthenticationError(`${what} is not valid before ${current.notBefore.toISOString()}`);
    const anchor = anchors.find((root) => root.issued(current));
    if (anchor) {
      if (!anchor.validAt(now)) throw new AuthenticationError(`the root that issued ${what} is not valid now (until ${anchor.notAfter.toISOString()})`);
      return;
    }
    const issuer = intermediates.find((candidate) => candidate.isCa && !candidate.equals(current) && candidate.issued(current));
    if (!issuer) throw new AuthenticationError(`${what} is not issued by the mesh CA (it does not chain to the trust bundle)`);
    current = issuer;
  }
  throw new AuthenticationError(`the client certificate's chain is longer than ${MAX_CHAIN_LENGTH}`);
}

/** The issuers a detailed peer certificate carries (`issuerCertificate` links), when it has them. */
function peerIssuers(peer: PeerCertificate): Certificate[] {
  const found: Certificate[] = [];
  let next = (peer as Partial<{ issuerCertificate: PeerCertificate }>).issuerCertificate;
  while (next?.raw && found.length < MAX_CHAIN_LENGTH && !found.some((cert) => cert.der.equals(next!.raw))) {
    try {
      found.push(Certificate.fromDer(next.raw, 'a client chain certificate'));
    } catch {
      break;
    }
    next = (next as Partial<{ issuerCertificate: PeerCertificate }>).issuerCertificate;
  }
  return found;
}

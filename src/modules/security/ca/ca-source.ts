import { SigningChain } from './signing-chain';
import { TrustBundle } from './trust-bundle';

export type CaMode = 'plugged-in' | 'self-signed';

/** Where the CA's signing key and trust anchors come from. */
export interface CaSource {
  readonly mode: CaMode;
  readonly trust: TrustBundle;
  /** The chain to sign with now (a rotation replaces it). */
  signing(): SigningChain;
}

import { Certificate } from './certificate';
import { KeyPair } from './keys';

/**
 * What the CA signs with: its key and certificate chain, the signing certificate first,
 * then its issuers, ending with the root. For a self-signed CA the chain is the root alone.
 */
export class SigningChain {
  constructor(
    readonly key: KeyPair,
    readonly chain: readonly Certificate[],
  ) {
    if (chain.length === 0) throw new Error('a signing chain needs at least one certificate');
  }

  get signingCert(): Certificate {
    return this.chain[0];
  }

  get root(): Certificate {
    return this.chain[this.chain.length - 1];
  }

  /** When the first certificate of the chain expires. */
  get expiry(): Date {
    return new Date(Math.min(...this.chain.map((cert) => cert.notAfter.getTime())));
  }

  /** The chain's certificates that are neither the root: intermediates, signing certificate included. */
  get intermediates(): readonly Certificate[] {
    return this.chain.length > 1 ? this.chain.slice(0, -1) : [];
  }
}

/**
 * Checks each certificate of `chain` was issued by the next one.
 * @throws Error naming `source` and the first broken link.
 */
export function checkChainLinks(chain: readonly Certificate[], source: string): void {
  for (let i = 0; i + 1 < chain.length; i++) {
    if (!chain[i + 1].issued(chain[i])) {
      throw new Error(`${source}: certificate ${i + 1} (${chain[i].subject || 'empty subject'}) is not issued by certificate ${i + 2} (${chain[i + 1].subject || 'empty subject'})`);
    }
  }
}

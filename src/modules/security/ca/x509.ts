/**
 * @peculiar/x509 wired to Node's WebCrypto, loaded on first use (with the ASN.1 schemas it
 * registers through tsyringe it costs about 0.1 s, which a program start not signing or
 * reading a certificate should not pay). The library resolves those schemas through
 * tsyringe, which needs reflect-metadata loaded first, and has no crypto of its own until a
 * provider is set; every CA module takes the library from here so both are always done.
 * Modules use its types with `import type * as x509 from '@peculiar/x509'`.
 */
import { webcrypto } from 'node:crypto';
import type * as x509 from '@peculiar/x509';
import { onFirstUse } from '../../shared/on-first-use';

/** The library's `Crypto` (a DOM type this build has no lib for) is Node's WebCrypto. */
export type X509Crypto = Parameters<typeof x509.cryptoProvider.set>[0];
/** The library's `CryptoKey` as it types it; at run time a Node WebCrypto key. */
export type X509CryptoKey = x509.X509CertificateCreateWithKeyParams['signingKey'];
export type X509KeyPair = x509.X509CertificateCreateSelfSignedParams['keys'];
export type X509SigningAlgorithm = NonNullable<x509.X509CertificateCreateParamsBase['signingAlgorithm']>;

export const x509Library = onFirstUse((): typeof x509 => {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  require('reflect-metadata');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const lib = require('@peculiar/x509') as typeof x509;
  lib.cryptoProvider.set(webcrypto as unknown as X509Crypto);
  return lib;
});

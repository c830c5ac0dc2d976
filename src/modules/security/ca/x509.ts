/**
 * @peculiar/x509 wired to Node's WebCrypto. The library resolves its ASN.1 schemas through
 * tsyringe, which needs reflect-metadata loaded first, and has no crypto of its own until a
 * provider is set; every CA module imports the library from here so both are always done.
 */
import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';

/** The library's `Crypto` (a DOM type this build has no lib for) is Node's WebCrypto. */
export type X509Crypto = Parameters<typeof x509.cryptoProvider.set>[0];
/** The library's `CryptoKey` as it types it; at run time a Node WebCrypto key. */
export type X509CryptoKey = x509.X509CertificateCreateWithKeyParams['signingKey'];
export type X509KeyPair = x509.X509CertificateCreateSelfSignedParams['keys'];
export type X509SigningAlgorithm = NonNullable<x509.X509CertificateCreateParamsBase['signingAlgorithm']>;

x509.cryptoProvider.set(webcrypto as unknown as X509Crypto);

export { x509 };

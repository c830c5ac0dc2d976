import { createPrivateKey, KeyObject, randomBytes, webcrypto } from 'node:crypto';
import { exportJWK, type JWK, SignJWT } from 'jose';
import * as x509 from '@peculiar/x509';
import { x509Library } from '../../../src/modules/security/ca/x509';

// Sets the library's crypto provider (Node's WebCrypto), as the CA does before its first use.
x509Library();

/*
 * The server's TLS identity: a test CA (ECDSA P-256, made with @peculiar/x509) and a serving
 * certificate for 127.0.0.1/localhost/kubernetes.default.svc; and the service account token
 * signer behind TokenRequest (ES256 JWTs, the public key published as JWKS). Both are made once
 * per server and survive restart().
 */

const EC = { name: 'ECDSA', namedCurve: 'P-256' } as const;
const SIGN = { name: 'ECDSA', hash: 'SHA-256' } as const;

export interface ServingIdentity {
  readonly caPem: string;
  readonly certPem: string;
  readonly keyPem: string;
}

type KeyPair = webcrypto.CryptoKeyPair;

async function keyPair(): Promise<KeyPair> {
  return (await webcrypto.subtle.generateKey(EC, true, ['sign', 'verify'])) as KeyPair;
}

async function pkcs8Pem(key: webcrypto.CryptoKey): Promise<string> {
  const der = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', key));
  return `-----BEGIN PRIVATE KEY-----\n${der.toString('base64').replace(/.{64}/g, '$&\n').replace(/\n?$/, '\n')}-----END PRIVATE KEY-----\n`;
}

const serial = () => randomBytes(16).toString('hex').replace(/^[89a-f]/, '1');

export async function makeServingIdentity(hosts: readonly string[] = ['127.0.0.1', 'localhost', 'kubernetes', 'kubernetes.default', 'kubernetes.default.svc', 'kubernetes.default.svc.cluster.local']): Promise<ServingIdentity> {
  const now = Date.now();
  const caKeys = await keyPair();
  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: 'CN=orch-api-test-ca',
    notBefore: new Date(now - 3600_000),
    notAfter: new Date(now + 7 * 24 * 3600_000),
    keys: caKeys as never,
    signingAlgorithm: SIGN,
    extensions: [new x509.BasicConstraintsExtension(true, undefined, true), new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true)],
  });
  const leafKeys = await keyPair();
  const names = hosts.map((h) => (/^[\d.]+$/.test(h) || h.includes(':') ? { type: 'ip' as const, value: h } : { type: 'dns' as const, value: h }));
  const leaf = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: 'CN=kube-apiserver',
    issuer: ca.subject,
    notBefore: new Date(now - 3600_000),
    notAfter: new Date(now + 7 * 24 * 3600_000),
    signingKey: caKeys.privateKey as never,
    publicKey: leafKeys.publicKey as never,
    signingAlgorithm: SIGN,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension(names),
    ],
  });
  return { caPem: ca.toString('pem') + '\n', certPem: leaf.toString('pem') + '\n', keyPem: await pkcs8Pem(leafKeys.privateKey) };
}

export const SERVICE_ACCOUNT_ISSUER = 'https://kubernetes.default.svc.cluster.local';

export interface TokenClaims {
  readonly namespace: string;
  readonly serviceAccount: string;
  readonly serviceAccountUid: string;
  readonly audiences: readonly string[];
  readonly expirationSeconds: number;
  readonly boundObject?: { kind: string; name: string; uid: string };
}

/** Signs service account tokens as the real server's TokenRequest does. */
export class TokenSigner {
  private constructor(
    private readonly privateKey: KeyObject,
    readonly jwk: JWK,
  ) {}

  static async create(): Promise<TokenSigner> {
    const pair = await keyPair();
    const privateKey = createPrivateKey(await pkcs8Pem(pair.privateKey));
    const jwk = await exportJWK(pair.publicKey);
    const kid = randomBytes(12).toString('base64url');
    return new TokenSigner(privateKey, { ...jwk, kid, use: 'sig', alg: 'ES256' });
  }

  async sign(claims: TokenClaims, nowMs = Date.now()): Promise<{ token: string; expiresAt: number }> {
    const iat = Math.floor(nowMs / 1000);
    const exp = iat + claims.expirationSeconds;
    const k8s: Record<string, unknown> = { namespace: claims.namespace, serviceaccount: { name: claims.serviceAccount, uid: claims.serviceAccountUid } };
    if (claims.boundObject?.kind === 'Pod') k8s.pod = { name: claims.boundObject.name, uid: claims.boundObject.uid };
    if (claims.boundObject?.kind === 'Secret') k8s.secret = { name: claims.boundObject.name, uid: claims.boundObject.uid };
    const token = await new SignJWT({ 'kubernetes.io': k8s })
      .setProtectedHeader({ alg: 'ES256', kid: this.jwk.kid })
      .setIssuer(SERVICE_ACCOUNT_ISSUER)
      .setSubject(`system:serviceaccount:${claims.namespace}:${claims.serviceAccount}`)
      .setAudience([...claims.audiences])
      .setIssuedAt(iat)
      .setNotBefore(iat)
      .setExpirationTime(exp)
      .setJti(randomBytes(16).toString('hex'))
      .sign(this.privateKey);
    return { token, expiresAt: exp * 1000 };
  }
}

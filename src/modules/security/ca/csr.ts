/**
 * Certificate signing requests (PKCS#10, PEM). The CA takes only the public key from a CSR:
 * the identities come from the caller's credential, so the CSR's subject and requested
 * names are ignored. The CSR must still be well formed and signed by the key it carries,
 * which proves the caller holds that key.
 */
import { CsrParseError } from './errors';
import type * as x509 from '@peculiar/x509';
import { x509Library } from './x509';

const SUPPORTED_CURVES = new Set(['P-256', 'P-384']);
const PEM_CSR = /-----BEGIN (NEW )?CERTIFICATE REQUEST-----[\s\S]*?-----END (NEW )?CERTIFICATE REQUEST-----/;

/**
 * The verified public key of a PEM CSR.
 * @throws CsrParseError saying what is wrong: not PEM, not a CSR, a bad signature, an unsupported key.
 */
export async function publicKeyOfCsr(csrPem: string): Promise<x509.PublicKey> {
  const block = PEM_CSR.exec(csrPem ?? '');
  if (!block) throw new CsrParseError('the CSR is not a PEM "CERTIFICATE REQUEST" block');
  let csr: x509.Pkcs10CertificateRequest;
  try {
    const body = block[0].replace(/-----(BEGIN|END) (NEW )?CERTIFICATE REQUEST-----/g, '').replace(/\s+/g, '');
    csr = new (x509Library().Pkcs10CertificateRequest)(Buffer.from(body, 'base64'));
  } catch (err) {
    throw new CsrParseError(`the CSR does not parse: ${(err as Error).message}`);
  }
  const algorithm = csr.publicKey.algorithm as { name: string; namedCurve?: string };
  if (algorithm.name === 'ECDSA') {
    if (!SUPPORTED_CURVES.has(algorithm.namedCurve ?? '')) {
      throw new CsrParseError(`the CSR's ECDSA curve ${algorithm.namedCurve ?? '(unknown)'} is not supported; use P-256 or P-384`);
    }
  } else if (algorithm.name !== 'RSASSA-PKCS1-v1_5' && algorithm.name !== 'RSA-PSS') {
    throw new CsrParseError(`the CSR's key algorithm ${algorithm.name} is not supported; use RSA or ECDSA`);
  }
  let verified: boolean;
  try {
    verified = await csr.verify();
  } catch (err) {
    throw new CsrParseError(`the CSR's signature cannot be checked: ${(err as Error).message}`);
  }
  if (!verified) throw new CsrParseError("the CSR's signature does not verify with its public key");
  return csr.publicKey;
}

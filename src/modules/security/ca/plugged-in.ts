/**
 * The plugged-in CA: key material an operator mounts in ROOT_CA_DIR, in the incumbent's
 * file layout. `ca-key.pem` signs, `ca-cert.pem` is its certificate, `cert-chain.pem`
 * (optional) is the chain above it (conventionally starting with ca-cert itself), and
 * `root-cert.pem` holds the trust anchors.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CaSource } from './ca-source';
import { Certificate, parseCertificates } from './certificate';
import { CaConfigError, messageOf } from './errors';
import { KeyPair, keyObjectOf, keyPairFromPem } from './keys';
import { checkChainLinks, SigningChain } from './signing-chain';
import { TrustBundle } from './trust-bundle';

export const CA_CERT_FILE = 'ca-cert.pem';
export const CA_KEY_FILE = 'ca-key.pem';
export const ROOT_CERT_FILE = 'root-cert.pem';
export const CERT_CHAIN_FILE = 'cert-chain.pem';
const REQUIRED_FILES = [CA_CERT_FILE, CA_KEY_FILE, ROOT_CERT_FILE];

export interface PluggedInCa {
  readonly signing: SigningChain;
  /** Every certificate of root-cert.pem: the trust bundle. */
  readonly roots: readonly Certificate[];
}

/**
 * Loads the plugged-in CA of `dir`; undefined when none of its files is there (then the
 * mesh uses a self-signed root).
 * @throws CaConfigError naming the file that is missing, unreadable, invalid or does not match.
 */
export async function loadPluggedInCa(dir: string, now: number): Promise<PluggedInCa | undefined> {
  const present = (name: string) => fs.existsSync(path.join(dir, name));
  const missing = REQUIRED_FILES.filter((name) => !present(name));
  if (missing.length === REQUIRED_FILES.length && !present(CERT_CHAIN_FILE)) return undefined;
  if (missing.length > 0) {
    throw new CaConfigError(
      `plugged-in CA in ${dir} is incomplete: ${missing.join(', ')} missing (needs ${REQUIRED_FILES.join(', ')}; ${CERT_CHAIN_FILE} is optional)`,
    );
  }
  const file = (name: string) => path.join(dir, name);
  const caCert = guard(() => Certificate.fromPem(read(file(CA_CERT_FILE)), file(CA_CERT_FILE)));
  const key = await guardAsync(() => keyPairFromPem(read(file(CA_KEY_FILE)), file(CA_KEY_FILE)));
  checkSigningCertificate(caCert, key, file(CA_CERT_FILE), file(CA_KEY_FILE), now);
  const roots = guard(() => parseCertificates(read(file(ROOT_CERT_FILE)), file(ROOT_CERT_FILE)));

  const chainFile = present(CERT_CHAIN_FILE) ? file(CERT_CHAIN_FILE) : undefined;
  const above = chainFile ? guard(() => parseCertificates(read(chainFile), chainFile)) : [];
  const chain = above.length > 0 && above[0].equals(caCert) ? above : [caCert, ...above];
  const chainSource = chainFile ?? file(CA_CERT_FILE);
  guard(() => checkChainLinks(chain, chainSource));
  const top = chain[chain.length - 1];
  if (!roots.some((root) => root.equals(top))) {
    const root = roots.find((candidate) => candidate.issued(top));
    if (!root) throw new CaConfigError(`${chainSource} does not chain to any certificate of ${file(ROOT_CERT_FILE)}`);
    chain.push(root);
  }
  return { signing: new SigningChain(key, chain), roots };
}

function checkSigningCertificate(cert: Certificate, key: KeyPair, certFile: string, keyFile: string, now: number): void {
  if (!cert.matchesPrivateKey(keyObjectOf(key.privateKey))) {
    throw new CaConfigError(`${keyFile} does not match the certificate in ${certFile}`);
  }
  if (!cert.isCa) throw new CaConfigError(`${certFile} is not a CA certificate (basic constraints CA:TRUE missing)`);
  if (now > cert.notAfter.getTime()) throw new CaConfigError(`${certFile} expired at ${cert.notAfter.toISOString()}`);
}

function read(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new CaConfigError(`cannot read ${file}: ${messageOf(err)}`);
  }
}

function guard<T>(load: () => T): T {
  try {
    return load();
  } catch (err) {
    throw err instanceof CaConfigError ? err : new CaConfigError(messageOf(err));
  }
}

async function guardAsync<T>(load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (err) {
    throw err instanceof CaConfigError ? err : new CaConfigError(messageOf(err));
  }
}

/** The plugged-in CA as a source: fixed key material; rotating it is the operator's job. */
export class PluggedInCaSource implements CaSource {
  readonly mode = 'plugged-in';
  readonly trust: TrustBundle;

  constructor(private readonly ca: PluggedInCa) {
    this.trust = new TrustBundle(ca.roots);
  }

  signing(): SigningChain {
    return this.ca.signing;
  }
}

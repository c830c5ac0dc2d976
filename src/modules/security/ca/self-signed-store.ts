/**
 * Persistence of the self-signed root, so a restarted daemon keeps signing with (and
 * workloads keep trusting) the same root. The file names differ from ROOT_CA_DIR's
 * plugged-in layout on purpose: pointing both at one directory must not turn a persisted
 * self-signed root into a half plugged-in CA.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Certificate, parseCertificates } from './certificate';
import { KeyPair, keyObjectOf, keyPairFromPem, privateKeyToPem } from './keys';

export const SELF_SIGNED_KEY_FILE = 'self-signed-root-key.pem';
export const SELF_SIGNED_CERT_FILE = 'self-signed-root-cert.pem';
/** Roots replaced by rotation, still trusted until they expire. */
export const PREVIOUS_ROOTS_FILE = 'self-signed-previous-roots.pem';

export interface PersistedRoot {
  readonly key: KeyPair;
  readonly cert: Certificate;
  readonly previousRoots: readonly Certificate[];
}

export class SelfSignedRootStore {
  constructor(readonly dir: string) {}

  private file(name: string): string {
    return path.join(this.dir, name);
  }

  /**
   * The persisted root; undefined when none was persisted.
   * @throws Error naming the file when what is there cannot be used.
   */
  async load(): Promise<PersistedRoot | undefined> {
    const keyFile = this.file(SELF_SIGNED_KEY_FILE);
    const certFile = this.file(SELF_SIGNED_CERT_FILE);
    const haveKey = fs.existsSync(keyFile);
    const haveCert = fs.existsSync(certFile);
    if (!haveKey && !haveCert) return undefined;
    if (!haveKey || !haveCert) throw new Error(`${haveKey ? certFile : keyFile} is missing`);
    const key = await keyPairFromPem(fs.readFileSync(keyFile, 'utf8'), keyFile);
    const cert = Certificate.fromPem(fs.readFileSync(certFile, 'utf8'), certFile);
    if (!cert.matchesPrivateKey(keyObjectOf(key.privateKey))) throw new Error(`${keyFile} does not match the certificate in ${certFile}`);
    const previousFile = this.file(PREVIOUS_ROOTS_FILE);
    const previousRoots = fs.existsSync(previousFile) ? parseCertificates(fs.readFileSync(previousFile, 'utf8'), previousFile) : [];
    return { key, cert, previousRoots };
  }

  /** Writes the root (key 0600) and the previous roots, each file replaced atomically. */
  async save(root: PersistedRoot): Promise<void> {
    fs.mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    writeAtomically(this.file(SELF_SIGNED_KEY_FILE), await privateKeyToPem(root.key.privateKey), 0o600);
    writeAtomically(this.file(SELF_SIGNED_CERT_FILE), root.cert.pem, 0o644);
    if (root.previousRoots.length > 0) {
      writeAtomically(this.file(PREVIOUS_ROOTS_FILE), root.previousRoots.map((cert) => cert.pem).join(''), 0o644);
    } else {
      fs.rmSync(this.file(PREVIOUS_ROOTS_FILE), { force: true });
    }
  }
}

function writeAtomically(file: string, content: string, mode: number): void {
  const temporary = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temporary, content, { mode });
  fs.chmodSync(temporary, mode); // the umask may have narrowed or the file existed with another mode
  fs.renameSync(temporary, file);
}

/**
 * One X.509 certificate, parsed once: node:crypto's view (issuer checks, signatures, key
 * match, PEM) and @peculiar/x509's (dates, extensions).
 */
import { KeyObject, X509Certificate as NodeX509Certificate } from 'node:crypto';
import type * as x509 from '@peculiar/x509';
import { x509Library } from './x509';

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;

export interface SubjectAltName {
  readonly type: string;
  readonly value: string;
}

export class Certificate {
  private constructor(
    readonly der: Buffer,
    private readonly node: NodeX509Certificate,
    private readonly parsed: x509.X509Certificate,
  ) {}

  /** @throws Error naming `source` when `der` is not a certificate. */
  static fromDer(der: Buffer, source: string): Certificate {
    try {
      return new Certificate(Buffer.from(der), new NodeX509Certificate(der), new (x509Library().X509Certificate)(der));
    } catch (err) {
      throw new Error(`${source} is not a valid certificate: ${(err as Error).message}`);
    }
  }

  /** The one certificate of `pem`; more than one is an error. */
  static fromPem(pem: string, source: string): Certificate {
    const all = parseCertificates(pem, source);
    if (all.length !== 1) throw new Error(`${source} holds ${all.length} certificates; expected one`);
    return all[0];
  }

  /** PEM, with a final newline. */
  get pem(): string {
    return this.node.toString();
  }
  get subject(): string {
    return this.parsed.subject;
  }
  get notBefore(): Date {
    return this.parsed.notBefore;
  }
  get notAfter(): Date {
    return this.parsed.notAfter;
  }
  get isCa(): boolean {
    return this.node.ca;
  }
  get publicKey(): KeyObject {
    return this.node.publicKey;
  }
  /** The x509 library's view, for use as an issuer or to read extensions. */
  get x509(): x509.X509Certificate {
    return this.parsed;
  }

  validAt(ms: number): boolean {
    return this.notBefore.getTime() <= ms && ms <= this.notAfter.getTime();
  }

  /** True when this certificate's name and key issued `child` (names match and the signature verifies). */
  issued(child: Certificate): boolean {
    try {
      return child.node.checkIssued(this.node) && child.node.verify(this.node.publicKey);
    } catch {
      return false;
    }
  }

  get selfSigned(): boolean {
    return this.issued(this);
  }

  matchesPrivateKey(key: KeyObject): boolean {
    try {
      return this.node.checkPrivateKey(key);
    } catch {
      return false;
    }
  }

  equals(other: Certificate): boolean {
    return this.der.equals(other.der);
  }

  subjectAltNames(): SubjectAltName[] {
    const extension = this.parsed.getExtension(x509Library().SubjectAlternativeNameExtension);
    return extension ? extension.names.items.map((name) => ({ type: name.type, value: name.value })) : [];
  }

  uriSans(): string[] {
    return this.subjectAltNames()
      .filter((name) => name.type === 'url')
      .map((name) => name.value);
  }
}

/**
 * Every certificate of a PEM text, in order.
 * @throws Error naming `source` when it holds none or one does not parse.
 */
export function parseCertificates(pemText: string, source: string): Certificate[] {
  const blocks = pemText.match(PEM_CERTIFICATE) ?? [];
  if (blocks.length === 0) throw new Error(`${source} holds no PEM certificate`);
  return blocks.map((block, i) => {
    const body = block.replace(/-----(BEGIN|END) CERTIFICATE-----/g, '').replace(/\s+/g, '');
    return Certificate.fromDer(Buffer.from(body, 'base64'), blocks.length > 1 ? `${source} (certificate ${i + 1})` : source);
  });
}

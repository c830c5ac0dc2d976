import 'reflect-metadata';
import { X509Certificate } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Backoff } from '../../shared/backoff';
import { CA_RENEWAL_BACKOFF, CaClient } from './ca-client';
import { readToken, tokenIdentity } from './token';
import { certificateRequest, generateWorkloadKey, KeySpec } from './workload-key';

/** The workload's key, its chain (leaf first) and the roots it trusts, as PEM. */
export interface WorkloadSecret {
  keyPem: string;
  certChainPem: string;
  rootsPem: string;
  /** The leaf's SPIFFE ID and validity, for logs and scheduling. */
  identity: string;
  notBefore: Date;
  notAfter: Date;
}

export interface WorkloadSecretsOptions {
  ca: CaClient;
  keySpec: KeySpec;
  tokenPath: string;
  trustDomain: string;
  /** Requested lifetime in seconds; 0 lets the CA choose (DEFAULT_WORKLOAD_CERT_TTL). */
  validitySeconds: number;
  /** SECRET_GRACE_PERIOD_RATIO: renew when this fraction of the lifetime is left. */
  graceRatio: number;
  /** Roots published by the daemon (also trusted for peers during a root rotation). */
  publishedRootsPem: () => string | undefined;
  /** OUTPUT_CERTS: where key.pem, cert-chain.pem and root-cert.pem are written; undefined = not written. */
  outputDir?: string;
  log: (level: 'info' | 'warn' | 'error', message: string) => void;
  now?: () => number;
}

/**
 * Obtains the workload certificate from the CA (with the token; with the current certificate
 * when the token cannot be read) and renews it before it expires; retries with backoff on
 * failure, keeping the current one. Listeners hear of every new secret.
 */
export class WorkloadSecrets {
  private current: WorkloadSecret | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly listeners = new Set<(secret: WorkloadSecret) => void>();
  private stopped = false;
  /** Renewal retries: jittered, so the workloads of a node do not all call the CA at once. */
  private readonly renewalBackoff = new Backoff(CA_RENEWAL_BACKOFF);

  constructor(private readonly options: WorkloadSecretsOptions) {}

  secret(): WorkloadSecret | undefined {
    return this.current;
  }

  onChange(listener: (secret: WorkloadSecret) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The first certificate; rejects with the reason when it cannot be had. */
  async start(): Promise<WorkloadSecret> {
    const secret = await this.fetch();
    this.install(secret);
    return secret;
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }

  /** Renews now (also used when the trusted roots change). */
  async rotate(): Promise<void> {
    try {
      this.install(await this.fetch());
      this.renewalBackoff.reset();
    } catch (err) {
      const retryMs = this.renewalBackoff.next();
      this.options.log('warn', `renewing the workload certificate failed (${(err as Error).message}); retrying in ${retryMs} ms`);
      this.schedule(retryMs);
    }
  }

  private async fetch(): Promise<WorkloadSecret> {
    const o = this.options;
    const key = await generateWorkloadKey(o.keySpec);
    let token: string | undefined;
    let tokenError: Error | undefined;
    try {
      token = readToken(o.tokenPath);
    } catch (err) {
      tokenError = err as Error;
    }
    const renewal = this.current && this.current.notAfter.getTime() > this.now();
    if (!token && !renewal) throw tokenError!;
    const identity = (token && tokenIdentity(token, o.trustDomain)) || this.current?.identity || '';
    const csr = await certificateRequest(key, identity);
    const chain = await o.ca.createCertificate(
      csr,
      o.validitySeconds,
      token ? { token } : { keyPem: this.current!.keyPem, certChainPem: this.current!.certChainPem },
    );
    const leaf = new X509Certificate(chain[0]);
    const uri = /URI:([^,\s]+)/.exec(leaf.subjectAltName ?? '')?.[1] ?? '';
    const roots = uniquePems([chain[chain.length - 1], ...splitPems(o.publishedRootsPem() ?? '')]);
    return {
      keyPem: key.keyPem,
      certChainPem: chain.map((c) => (c.endsWith('\n') ? c : `${c}\n`)).join(''),
      rootsPem: roots.join(''),
      identity: uri,
      notBefore: new Date(leaf.validFrom),
      notAfter: new Date(leaf.validTo),
    };
  }

  private install(secret: WorkloadSecret): void {
    this.current = secret;
    this.writeOutput(secret);
    this.options.log('info', `workload certificate for ${secret.identity} valid until ${secret.notAfter.toISOString()}`);
    for (const l of this.listeners) l(secret);
    const life = secret.notAfter.getTime() - secret.notBefore.getTime();
    const renewAt = secret.notAfter.getTime() - life * this.options.graceRatio;
    this.schedule(Math.max(0, renewAt - this.now()));
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.rotate(), delayMs);
    this.timer.unref();
  }

  /** Written key first with 0600, then renamed into place, so a reader never sees half a file. */
  private writeOutput(secret: WorkloadSecret): void {
    const dir = this.options.outputDir;
    if (!dir) return;
    try {
      fs.mkdirSync(dir, { recursive: true });
      const write = (name: string, text: string, mode: number) => {
        const tmp = path.join(dir, `.${name}.tmp`);
        fs.writeFileSync(tmp, text, { mode });
        fs.renameSync(tmp, path.join(dir, name));
      };
      write('key.pem', secret.keyPem, 0o600);
      write('cert-chain.pem', secret.certChainPem, 0o644);
      write('root-cert.pem', secret.rootsPem, 0o644);
    } catch (err) {
      this.options.log('error', `OUTPUT_CERTS: cannot write certificates to ${dir}: ${(err as Error).message}`);
    }
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }
}

export function splitPems(text: string): string[] {
  return text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----\n?/g)?.map((p) => (p.endsWith('\n') ? p : `${p}\n`)) ?? [];
}

function uniquePems(pems: string[]): string[] {
  const seen = new Set<string>();
  return pems
    .flatMap((p) => splitPems(p.endsWith('\n') ? p : `${p}\n`))
    .filter((p) => {
      const key = p.replace(/\s+/g, '');
      return !seen.has(key) && seen.add(key);
    });
}

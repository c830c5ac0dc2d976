/**
 * Secrets the built-in proxy's TLS contexts name (`default`, `ROOTCA`), fetched over SDS from
 * the agent's Unix socket as Envoy does: one state-of-the-world stream, ACKed, re-subscribed
 * when a new name is needed, reconnected with backoff.
 */
import * as path from 'node:path';
import { AdsNode, Decoded, XdsClient, XdsLogLevel } from '../xds/xds-client';
import { SECRET_TYPE } from '../../envoy/well-known';

/** The agent's SDS server is a local socket: retry it sooner than the daemon. */
const SDS_BACKOFF = { initialMs: 200, maxMs: 2000 };

export interface TlsSecret {
  certChainPem?: string;
  keyPem?: string;
  trustedCaPem?: string;
}

export class SecretStore {
  private readonly secrets = new Map<string, TlsSecret>();
  private readonly wanted = new Set<string>();
  private readonly listeners = new Set<() => void>();
  private generation = 0;

  /** The names of the secrets received, sorted. */
  names(): string[] {
    return [...this.secrets.keys()].sort();
  }

  get(name: string): TlsSecret | undefined {
    return this.secrets.get(name);
  }

  /** Bumped on every change, so contexts built from secrets know when to rebuild. */
  version(): number {
    return this.generation;
  }

  set(name: string, secret: TlsSecret): void {
    this.secrets.set(name, secret);
    this.generation += 1;
    for (const l of this.listeners) l();
  }

  want(name: string): void {
    if (this.wanted.has(name)) return;
    this.wanted.add(name);
    for (const l of this.listeners) l();
  }

  wantedNames(): string[] {
    return [...this.wanted].sort();
  }

  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

/** An Envoy DataSource as PEM text; files are not read (the mesh hands certificates over SDS). */
export function pem(source: Decoded | undefined): string | undefined {
  if (!source) return undefined;
  if (source.inline_bytes !== undefined) return Buffer.from(String(source.inline_bytes), 'base64').toString('utf8');
  if (source.inline_string !== undefined) return String(source.inline_string);
  if (source.filename) throw new Error(`certificates from files (${source.filename}) are not supported by the built-in proxy`);
  return undefined;
}

/** An Envoy Secret → the PEM it carries. */
export function secretFromConfig(secret: Decoded): TlsSecret {
  if (secret.tls_certificate) return { certChainPem: pem(secret.tls_certificate.certificate_chain), keyPem: pem(secret.tls_certificate.private_key) };
  if (secret.validation_context) return { trustedCaPem: pem(secret.validation_context.trusted_ca) };
  throw new Error(`secret ${secret.name}: neither tls_certificate nor validation_context`);
}

export class SdsClient {
  private readonly xds: XdsClient;
  private readonly unwatch: () => void;

  constructor(socketPath: string, store: SecretStore, node: AdsNode, log: (level: XdsLogLevel, message: string) => void) {
    this.xds = new XdsClient(
      { address: `unix:${path.resolve(socketPath)}`, node, service: 'sds', wildcardTypes: [], label: 'SDS', backoff: SDS_BACKOFF },
      {
        log,
        apply: (_typeUrl, secrets) => {
          // All or nothing: a secret that does not parse NACKs the response.
          const parsed = [...secrets].map(([name, secret]) => [name, secretFromConfig(secret)] as const);
          for (const [name, secret] of parsed) store.set(name, secret);
        },
      },
    );
    this.unwatch = store.onChange(() => this.xds.subscribe(SECRET_TYPE, store.wantedNames()));
    if (store.wantedNames().length > 0) this.xds.subscribe(SECRET_TYPE, store.wantedNames());
  }

  start(): void {
    this.xds.start();
  }

  stop(): void {
    this.unwatch();
    this.xds.stop();
  }
}

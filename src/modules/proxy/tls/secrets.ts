/**
 * Secrets the built-in proxy's TLS contexts name (`default`, `ROOTCA`), fetched over SDS from
 * the agent's Unix socket as Envoy does: one state-of-the-world stream, ACKed, re-subscribed
 * when a new name is needed, reconnected with backoff.
 */
import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { decodeMessage, encodeMessage } from '../../xds/protos';
import type { Decoded } from '../xds/ads-client';

const SECRET_TYPE = 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret';
const STREAM = '/envoy.service.secret.v3.SecretDiscoveryService/StreamSecrets';

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
  private client: grpc.Client | undefined;
  private call: grpc.ClientDuplexStream<Buffer, Buffer> | undefined;
  private subscribed = '';
  private stopped = false;
  private retryMs = 200;
  private readonly unwatch: () => void;

  constructor(
    private readonly socketPath: string,
    private readonly store: SecretStore,
    private readonly node: { id: string; cluster?: string },
    private readonly log: (level: 'info' | 'warn', message: string) => void,
  ) {
    this.unwatch = store.onChange(() => this.resubscribe());
  }

  start(): void {
    this.client = new grpc.Client(`unix:${path.resolve(this.socketPath)}`, grpc.credentials.createInsecure());
    this.open();
  }

  stop(): void {
    this.stopped = true;
    this.unwatch();
    this.call?.cancel();
    this.client?.close();
  }

  private open(): void {
    if (this.stopped || !this.client) return;
    const pass = (b: Buffer) => b;
    const call = this.client.makeBidiStreamRequest(STREAM, pass, pass);
    this.call = call;
    this.subscribed = '';
    call.on('data', (bytes: Buffer) => this.onResponse(call, bytes));
    call.on('error', (err: grpc.ServiceError) => {
      if (this.stopped) return;
      this.log('warn', `SDS stream to ${this.socketPath} failed: ${err.details || err.message}; retrying in ${this.retryMs} ms`);
      this.call = undefined;
      setTimeout(() => this.open(), this.retryMs).unref();
      this.retryMs = Math.min(this.retryMs * 2, 10_000);
    });
    this.resubscribe();
  }

  private resubscribe(): void {
    const names = this.store.wantedNames();
    const key = names.join(',');
    if (!this.call || names.length === 0 || key === this.subscribed) return;
    this.subscribed = key;
    this.send({ resource_names: names, response_nonce: '', version_info: '' });
  }

  private onResponse(call: grpc.ClientDuplexStream<Buffer, Buffer>, bytes: Buffer): void {
    this.retryMs = 200;
    const response = decodeMessage('envoy.service.discovery.v3.DiscoveryResponse', bytes) as Decoded;
    try {
      for (const any of (response.resources ?? []) as Decoded[]) {
        const secret = any as Decoded;
        this.store.set(String(secret.name), secretFromConfig(secret));
      }
      this.send({ resource_names: this.store.wantedNames(), response_nonce: response.nonce, version_info: response.version_info }, call);
    } catch (err) {
      this.send({ resource_names: this.store.wantedNames(), response_nonce: response.nonce, version_info: '', error_detail: { code: 3, message: (err as Error).message } }, call);
    }
  }

  private send(request: Decoded, call = this.call): void {
    call?.write(
      encodeMessage('envoy.service.discovery.v3.DiscoveryRequest', {
        node: { id: this.node.id, cluster: this.node.cluster ?? '' },
        type_url: SECRET_TYPE,
        ...request,
      }),
    );
  }
}

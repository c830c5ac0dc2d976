import * as fs from 'node:fs';
import * as path from 'node:path';
import type * as grpc from '@grpc/grpc-js';
import { grpcLibrary } from '../../shared/grpc-library';
import { encodeMessage } from '../../envoy/protos';
import { encodeDiscoveryResponse, EncodedResource } from '../../envoy/wire';
import { decodeDiscoveryRequest, DiscoveryRequest } from '../../envoy/discovery-requests';
import { WorkloadSecret } from './workload-secrets';
import { SECRET_TYPE } from '../../envoy/well-known';

export const SECRET_TYPE_URL = SECRET_TYPE;
/** The secret names the mesh's generated config asks for (the incumbent's names). */
export const WORKLOAD_SECRET = 'default';
export const ROOT_SECRET = 'ROOTCA';
const SERVICE = 'envoy.service.secret.v3.SecretDiscoveryService';

/** Secret `default` (key and chain) or `ROOTCA` (trusted roots) as an encoded Envoy Secret. */
export function encodeSecret(name: string, secret: WorkloadSecret): Buffer | undefined {
  if (name === WORKLOAD_SECRET) {
    return encodeMessage(SECRET_TYPE_URL, {
      name,
      tls_certificate: { certificate_chain: { inline_bytes: Buffer.from(secret.certChainPem) }, private_key: { inline_bytes: Buffer.from(secret.keyPem) } },
    });
  }
  if (name === ROOT_SECRET) {
    return encodeMessage(SECRET_TYPE_URL, { name, validation_context: { trusted_ca: { inline_bytes: Buffer.from(secret.rootsPem) } } });
  }
  return undefined;
}

interface SdsStream {
  stream: grpc.ServerDuplexStream<Buffer, Buffer>;
  names: string[];
  nonce: number;
}

/**
 * The agent's SDS server on a Unix socket (state-of-the-world SecretDiscoveryService): the
 * proxy asks for `default` and `ROOTCA` and gets them again on every renewal, so it never
 * holds credentials of its own.
 */
export class SdsServer {
  private server: grpc.Server | undefined;
  private readonly streams = new Set<SdsStream>();
  private version = 0;

  constructor(
    private readonly socketPath: string,
    private readonly current: () => WorkloadSecret | undefined,
    private readonly log: (level: 'info' | 'warn', message: string) => void,
  ) {}

  async start(): Promise<void> {
    fs.mkdirSync(path.dirname(this.socketPath), { recursive: true });
    fs.rmSync(this.socketPath, { force: true });
    const server = new (grpcLibrary().Server)();
    const pass = (b: Buffer) => b;
    server.addService(
      {
        StreamSecrets: {
          path: `/${SERVICE}/StreamSecrets`,
          requestStream: true,
          responseStream: true,
          requestSerialize: pass,
          requestDeserialize: decodeDiscoveryRequest as unknown as (b: Buffer) => Buffer,
          responseSerialize: pass,
          responseDeserialize: pass,
        },
      },
      { StreamSecrets: (stream: grpc.ServerDuplexStream<Buffer, Buffer>) => this.serve(stream) },
    );
    await new Promise<void>((resolve, reject) => server.bindAsync(`unix:${path.resolve(this.socketPath)}`, grpcLibrary().ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve())));
    this.server = server;
  }

  /** A new secret: every open stream gets its names again. */
  secretsChanged(): void {
    this.version += 1;
    for (const s of this.streams) this.send(s);
  }

  async stop(): Promise<void> {
    for (const s of this.streams) s.stream.end();
    await new Promise<void>((resolve) => (this.server ? this.server.tryShutdown(() => resolve()) : resolve()));
    fs.rmSync(this.socketPath, { force: true });
  }

  private serve(stream: grpc.ServerDuplexStream<Buffer, Buffer>): void {
    const state: SdsStream = { stream, names: [], nonce: 0 };
    this.streams.add(state);
    const drop = () => this.streams.delete(state);
    stream.on('data', (raw: unknown) => {
      const req = raw as DiscoveryRequest;
      if (req.error_detail?.message) this.log('warn', `the proxy rejected secrets ${state.names.join(', ')}: ${req.error_detail.message}`);
      const names = [...req.resource_names].sort();
      // An ACK of what was sent needs no answer; a new subscription does.
      if (req.response_nonce && names.join(',') === state.names.join(',')) return;
      state.names = names;
      this.send(state);
    });
    stream.on('end', () => {
      drop();
      stream.end();
    });
    stream.on('error', drop);
    stream.on('close', drop);
  }

  private send(state: SdsStream): void {
    const secret = this.current();
    if (!secret || state.names.length === 0) return;
    const resources: EncodedResource[] = [];
    for (const name of state.names) {
      const body = encodeSecret(name, secret);
      if (body) resources.push({ name, body });
      else this.log('warn', `the proxy asked for unknown secret "${name}" (served: ${WORKLOAD_SECRET}, ${ROOT_SECRET})`);
    }
    state.nonce += 1;
    state.stream.write(encodeDiscoveryResponse(SECRET_TYPE_URL, String(this.version), String(state.nonce), resources, 'pilot-agent'));
  }
}

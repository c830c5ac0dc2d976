import * as fs from 'node:fs';
import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';

const ADS = 'envoy.service.discovery.v3.AggregatedDiscoveryService';
const METHODS = ['StreamAggregatedResources', 'DeltaAggregatedResources'] as const;

export interface XdsProxyOptions {
  /** Unix socket the proxy connects to. */
  socketPath: string;
  /** The daemon's address, `host:port`. */
  upstreamAddress: string;
  /** Credentials for the daemon, asked for each new upstream channel (they change on renewal). */
  upstreamCredentials: () => grpc.ChannelCredentials;
  /** Channel options (e.g. the name the daemon's certificate is checked against). */
  channelOptions?: grpc.ChannelOptions;
  log: (level: 'info' | 'warn', message: string) => void;
}

/**
 * The agent's xDS proxy: the proxy speaks ADS (state of the world or delta) to the agent over a
 * Unix socket, and the agent carries each stream to the daemon over TLS with the workload
 * certificate, so the proxy holds no credentials. Messages pass through unchanged.
 */
export class XdsProxy {
  private server: grpc.Server | undefined;
  private client: grpc.Client | undefined;
  private readonly open = new Set<grpc.ClientDuplexStream<Buffer, Buffer>>();

  constructor(private readonly options: XdsProxyOptions) {}

  async start(): Promise<void> {
    const { socketPath } = this.options;
    fs.mkdirSync(path.dirname(socketPath), { recursive: true });
    fs.rmSync(socketPath, { force: true });
    const server = new grpc.Server({ 'grpc.max_receive_message_length': -1, 'grpc.max_send_message_length': -1 });
    const pass = (b: Buffer) => b;
    const definition: Record<string, grpc.MethodDefinition<Buffer, Buffer>> = {};
    const handlers: grpc.UntypedServiceImplementation = {};
    for (const name of METHODS) {
      definition[name] = { path: `/${ADS}/${name}`, requestStream: true, responseStream: true, requestSerialize: pass, requestDeserialize: pass, responseSerialize: pass, responseDeserialize: pass };
      handlers[name] = (downstream: grpc.ServerDuplexStream<Buffer, Buffer>) => this.relay(name, downstream);
    }
    server.addService(definition, handlers);
    await new Promise<void>((resolve, reject) => server.bindAsync(`unix:${path.resolve(socketPath)}`, grpc.ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve())));
    this.server = server;
  }

  /** New credentials (a renewed certificate): later streams use a fresh channel; open ones carry on. */
  credentialsChanged(): void {
    const old = this.client;
    this.client = undefined;
    // Closing a channel does not cancel its open calls.
    old?.close();
  }

  async stop(): Promise<void> {
    for (const s of this.open) s.cancel();
    this.client?.close();
    await new Promise<void>((resolve) => (this.server ? this.server.tryShutdown(() => resolve()) : resolve()));
    fs.rmSync(this.options.socketPath, { force: true });
  }

  private upstreamClient(): grpc.Client {
    if (!this.client) {
      this.client = new grpc.Client(this.options.upstreamAddress, this.options.upstreamCredentials(), {
        'grpc.max_receive_message_length': -1,
        ...this.options.channelOptions,
      });
    }
    return this.client;
  }

  private relay(method: string, downstream: grpc.ServerDuplexStream<Buffer, Buffer>): void {
    const pass = (b: Buffer) => b;
    let upstream: grpc.ClientDuplexStream<Buffer, Buffer>;
    try {
      upstream = this.upstreamClient().makeBidiStreamRequest(`/${ADS}/${method}`, pass, pass);
    } catch (err) {
      downstream.emit('error', { code: grpc.status.UNAVAILABLE, details: `xDS proxy: ${(err as Error).message}` });
      return;
    }
    this.open.add(upstream);
    let finished = false;
    const finish = () => {
      finished = true;
      this.open.delete(upstream);
    };
    downstream.on('data', (msg: Buffer) => upstream.write(msg));
    downstream.on('end', () => upstream.end());
    downstream.on('cancelled', () => {
      finish();
      upstream.cancel();
    });
    downstream.on('error', () => upstream.cancel());
    upstream.on('data', (msg: Buffer) => downstream.write(msg));
    upstream.on('end', () => {
      finish();
      downstream.end();
    });
    upstream.on('error', (err: grpc.ServiceError) => {
      if (finished) return;
      finish();
      if (err.code !== grpc.status.CANCELLED) this.options.log('warn', `xDS stream to ${this.options.upstreamAddress} failed: ${err.details || err.message}`);
      // A channel that could not connect backs off for longer and longer; the proxy's own retry
      // should reach a daemon that has just come up, so the next stream gets a fresh channel.
      if (err.code === grpc.status.UNAVAILABLE) this.credentialsChanged();
      downstream.emit('error', { code: err.code, details: err.details || err.message, metadata: err.metadata });
    });
  }
}

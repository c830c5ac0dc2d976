import * as fs from 'node:fs';
import * as path from 'node:path';
import type * as grpc from '@grpc/grpc-js';
import { grpcLibrary } from '../shared/grpc-library';
import { Backoff } from '../shared/backoff';
import type { XdsConnectionEvents } from '../proxy/xds/xds-client';
import { DaemonLink, XdsRelay } from './xds-relay';

const ADS = 'envoy.service.discovery.v3.AggregatedDiscoveryService';
const METHODS = ['StreamAggregatedResources', 'DeltaAggregatedResources'] as const;
/** How long one probe waits for a connection before it counts as failed. */
const PROBE_TIMEOUT_MS = 5000;
/**
 * The probe's schedule: one TCP (and TLS) connection per agent at most every second or so is
 * cheap for a daemon, and every proxy of the workload waits on it.
 */
const PROBE_BACKOFF = { initialMs: 250, maxMs: 1000 };
/** A long outage is logged again this often, not on every attempt. */
const OUTAGE_LOG_MS = 30_000;

export interface XdsProxyOptions {
  /** Unix socket the proxy connects to. */
  socketPath: string;
  /** The daemon's address, `host:port`. */
  upstreamAddress: string;
  /** Credentials for the daemon, asked for each new upstream channel (they change on renewal). */
  upstreamCredentials: () => grpc.ChannelCredentials;
  /** Channel options (keepalive, the name the daemon's certificate is checked against). */
  channelOptions?: grpc.ChannelOptions;
  /** Told when the link to the daemon comes and goes (the agent's metrics). */
  events?: XdsConnectionEvents;
  log: (level: 'info' | 'warn', message: string) => void;
}

/**
 * The agent's xDS proxy: the proxy (Envoy, the built-in proxy, the DNS name-table client,
 * proxyless gRPC applications) speaks ADS, state of the world or delta, to the agent over a
 * Unix socket, and the agent carries each stream to the daemon over TLS with the workload
 * certificate, so the proxy holds no credentials. Each stream is an XdsRelay; this class owns
 * the link to the daemon they share: the channel, and while the daemon is away, one probe loop
 * (jittered backoff, a fresh channel each time) that tells every waiting relay when it is back.
 */
export class XdsProxy {
  private server: grpc.Server | undefined;
  private client: grpc.Client | undefined;
  private readonly relays = new Set<XdsRelay>();
  private probing: Promise<void> | undefined;
  private stopped = false;
  /** Whether the daemon answered since the link was last lost; undefined before the first answer. */
  private up: boolean | undefined;
  private downSince = Date.now();
  private lastOutageLog = 0;

  constructor(private readonly options: XdsProxyOptions) {}

  async start(): Promise<void> {
    const { socketPath } = this.options;
    fs.mkdirSync(path.dirname(socketPath), { recursive: true });
    fs.rmSync(socketPath, { force: true });
    const server = new (grpcLibrary().Server)({ 'grpc.max_receive_message_length': -1, 'grpc.max_send_message_length': -1 });
    const pass = (b: Buffer) => b;
    const definition: Record<string, grpc.MethodDefinition<Buffer, Buffer>> = {};
    const handlers: grpc.UntypedServiceImplementation = {};
    for (const name of METHODS) {
      definition[name] = { path: `/${ADS}/${name}`, requestStream: true, responseStream: true, requestSerialize: pass, requestDeserialize: pass, responseSerialize: pass, responseDeserialize: pass };
      handlers[name] = (downstream: grpc.ServerDuplexStream<Buffer, Buffer>) => {
        const relay = new XdsRelay(`/${ADS}/${name}`, downstream, this.link, (r) => this.relays.delete(r));
        this.relays.add(relay);
        relay.start();
      };
    }
    server.addService(definition, handlers);
    await new Promise<void>((resolve, reject) => server.bindAsync(`unix:${path.resolve(socketPath)}`, grpcLibrary().ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve())));
    this.server = server;
  }

  /** New credentials (a renewed certificate): later streams use a fresh channel; open ones carry on. */
  credentialsChanged(): void {
    const old = this.client;
    this.client = undefined;
    // Closing a channel does not cancel its open calls.
    old?.close();
  }

  /** Whether the daemon is answering. */
  connected(): boolean {
    return this.up === true;
  }

  /** How long the daemon has not been answering (0 while it is). */
  disconnectedForMs(): number {
    return this.up === true ? 0 : Date.now() - this.downSince;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const relay of [...this.relays]) relay.shutdown('the agent is stopping');
    this.client?.close();
    await new Promise<void>((resolve) => (this.server ? this.server.tryShutdown(() => resolve()) : resolve()));
    fs.rmSync(this.options.socketPath, { force: true });
  }

  private readonly link: DaemonLink = {
    open: (method) => {
      const pass = (b: Buffer) => b;
      return this.upstreamClient().makeBidiStreamRequest(method, pass, pass);
    },
    reachable: () => {
      if (this.stopped) return Promise.reject(new Error('stopped'));
      this.probing ??= this.probeUntilReachable().finally(() => (this.probing = undefined));
      return this.probing;
    },
    answered: () => {
      if (this.up === true) return;
      const wasLost = this.up === false;
      const downMs = Date.now() - this.downSince;
      this.up = true;
      this.lastOutageLog = 0;
      this.options.log('info', wasLost ? `the daemon ${this.options.upstreamAddress} answers again after ${(downMs / 1000).toFixed(1)} s` : `the daemon ${this.options.upstreamAddress} answers`);
      this.options.events?.connected?.(wasLost ? downMs : 0);
    },
    lost: (details) => {
      if (this.up === true) {
        this.up = false;
        this.downSince = Date.now();
        this.options.events?.disconnected?.(details);
        this.options.log('warn', `lost the daemon ${this.options.upstreamAddress} (${details}); proxies keep their last good config and reconnect once it is back`);
        this.lastOutageLog = Date.now();
        return;
      }
      this.options.events?.attemptFailed?.(details);
      if (Date.now() - this.lastOutageLog >= OUTAGE_LOG_MS) {
        this.lastOutageLog = Date.now();
        this.options.log('warn', `the daemon ${this.options.upstreamAddress} is unreachable for ${(this.disconnectedForMs() / 1000).toFixed(1)} s (${details}); still trying`);
      }
    },
    failed: (message) => this.options.log('warn', message),
  };

  /** One loop for every waiting relay: a fresh channel each try (grpc-js would back off for minutes on its own). */
  private async probeUntilReachable(): Promise<void> {
    const backoff = new Backoff(PROBE_BACKOFF);
    while (!this.stopped) {
      this.credentialsChanged();
      let channel: grpc.Channel | undefined;
      try {
        channel = this.upstreamClient().getChannel() as grpc.Channel;
      } catch (err) {
        this.link.lost(`cannot build the channel: ${(err as Error).message}`);
      }
      if (channel && (await connects(channel, PROBE_TIMEOUT_MS))) return;
      if (channel) this.link.lost('no connection');
      await new Promise((r) => setTimeout(r, backoff.next()));
    }
    throw new Error('stopped');
  }

  private upstreamClient(): grpc.Client {
    if (!this.client) {
      this.client = new (grpcLibrary().Client)(this.options.upstreamAddress, this.options.upstreamCredentials(), {
        'grpc.max_receive_message_length': -1,
        ...this.options.channelOptions,
      });
    }
    return this.client;
  }
}

/** Whether the channel reaches READY (connected, TLS done) before failing or the time is up. */
function connects(channel: grpc.Channel, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve) => {
    const check = () => {
      const state = channel.getConnectivityState(true);
      if (state === grpcLibrary().connectivityState.READY) return resolve(true);
      if (state === grpcLibrary().connectivityState.TRANSIENT_FAILURE || state === grpcLibrary().connectivityState.SHUTDOWN) return resolve(false);
      channel.watchConnectivityState(state, deadline, (err) => (err ? resolve(false) : check()));
    };
    check();
  });
}

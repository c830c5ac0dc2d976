import 'reflect-metadata';
import type * as grpc from '@grpc/grpc-js';
import { grpcLibrary } from '../shared/grpc-library';
import { FramePool, poolServerFrames } from './frame-pool';
import { inject, injectable } from 'inversify';
import { ChangeSet, XdsGenerator } from '../model/generator';
import { ScopedLogger } from '../logging';
import { PushContext } from '../model/push-context';
import { prepareXdsMessages } from '../envoy/protos';
import { adsService, channelOptions } from './ads-service';
import { XdsConnection } from './connection';
import { XdsConnectionListener } from './connection-listener';
import { XdsDebugService } from './debug-requests';
import { XdsObserver } from './observer';
import { OpenStreams } from './open-streams';
import { PushQueue } from './push-queue';
import { RateLimiter } from './rate-limiter';
import { Responder } from './responder';
import { XdsStreamAuth } from './stream-auth';
import { WriteBudget } from './write-budget';

/** Binds the server's options in a dependency-injection container. */
export const XdsServerOptionsToken = Symbol.for('mesh.XdsServerOptions');

export interface XdsServerOptions {
  /** Generators by node metadata GENERATOR; `''` serves Envoy sidecars and routers. */
  generators: ReadonlyMap<string, XdsGenerator>;
  /** MESH_DELTA_XDS: serve DeltaAggregatedResources too. */
  deltaEnabled: boolean;
  maxReceiveMessageBytes: number;
  maxConcurrentStreams: number;
  keepaliveIntervalMs: number;
  keepaliveTimeoutMs: number;
  /** Undefined = unlimited. */
  maxConnectionAgeMs?: number;
  pushConcurrency: number;
  /** Response bytes being written at once, across all streams. */
  maxBytesInFlight?: number;
  /** Responses being generated and encoded at once, across all streams. */
  maxResponsesInPreparation?: number;
  /** New streams admitted per second (PILOT_MAX_REQUESTS_PER_SECOND). */
  newStreamsPerSecond: number;
  /** Identifier sent as `control_plane.identifier`. */
  controlPlaneId: string;
  logger: ScopedLogger;
  observer: XdsObserver;
  /** The current push context; undefined until the first one is built (requests then wait). */
  currentPush: () => PushContext | undefined;
  /** Told of every admitted stream and its close (XdsConnectionListener contributions). */
  connectionListeners?: readonly XdsConnectionListener[];
}

/** One address the ADS service is served on. */
export interface XdsListener {
  host: string;
  port: number;
  credentials: grpc.ServerCredentials;
  /** Who may open streams here, and as which proxies; none = anyone (plaintext, trusted network). */
  auth?: XdsStreamAuth;
  /** Other gRPC services on the same address (the CA beside secure xDS). */
  services?: { definition: grpc.ServiceDefinition; implementation: grpc.UntypedServiceImplementation }[];
}

/**
 * The ADS server (DESIGN.md §2): speaks state-of-the-world and delta xDS, tracks versions,
 * nonces, ACKs and NACKs per proxy and type, and pushes what changed to the proxies it
 * concerns. It never builds config itself: generators do, from the push context.
 *
 * This class only composes: the gRPC servers it listens with (ads-service), the open streams
 * (open-streams; each one a sotw-stream or delta-stream), the push queue and the write budget
 * all streams share, and the responder that answers for them (response-planner decides what
 * each response carries).
 */
@injectable()
export class XdsServer {
  private readonly servers: grpc.Server[] = [];
  private readonly streams: OpenStreams;
  private debug: XdsDebugService | undefined;

  constructor(@inject(XdsServerOptionsToken) private readonly options: XdsServerOptions) {
    const budget = new WriteBudget(options.maxResponsesInPreparation, options.maxBytesInFlight);
    // Frames are reused instead of allocated per write; as many bytes kept for reuse as may be in flight.
    poolServerFrames(new FramePool(budget.maxBytesInFlight));
    const services = { options, queue: new PushQueue(options.pushConcurrency), responder: new Responder(options, budget), debug: () => this.debug };
    this.streams = new OpenStreams(services, new RateLimiter(options.newStreamsPerSecond));
  }

  /**
   * Who answers the debug requests of every stream (`mesh.io/debug...`); set by whoever runs
   * the server before it listens, since the answers read the server's own connections.
   */
  answerDebugRequestsWith(service: XdsDebugService): void {
    this.debug = service;
  }

  /** Binds the plaintext `host:port` (port 0 picks one) and resolves with the bound port. */
  async start(host: string, port: number): Promise<number> {
    return this.listen({ host, port, credentials: grpcLibrary().ServerCredentials.createInsecure() });
  }

  /**
   * Serves ADS on another address, e.g. the TLS `--secureGRPCAddr` with its authenticator and
   * the CA service beside it. Resolves with the bound port.
   */
  async listen(listener: XdsListener): Promise<number> {
    prepareXdsMessages();
    const server = new (grpcLibrary().Server)(channelOptions(this.options));
    const { methods, handlers } = adsService(this.options.deltaEnabled, (call, protocol) => this.streams.serve(call, protocol, listener.auth));
    server.addService(methods, handlers);
    for (const extra of listener.services ?? []) server.addService(extra.definition, extra.implementation);
    const { host, port } = listener;
    const target = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
    const bound = await new Promise<number>((resolve, reject) =>
      server.bindAsync(target, listener.credentials, (err, p) => (err ? reject(err) : resolve(p))),
    );
    this.servers.push(server);
    return bound;
  }

  /** Stops accepting streams, lets open ones finish for up to `graceMs`, then cuts them. */
  async stop(graceMs: number): Promise<void> {
    const servers = this.servers.splice(0);
    if (servers.length === 0) return;
    for (const s of this.streams.values()) s.end();
    await Promise.all(
      servers.map(
        (server) =>
          new Promise<void>((resolve) => {
            const timer = setTimeout(() => {
              server.forceShutdown();
              resolve();
            }, graceMs);
            server.tryShutdown(() => {
              clearTimeout(timer);
              resolve();
            });
          }),
      ),
    );
  }

  connections(): XdsConnection[] {
    return this.streams.connections();
  }

  /** Queues a push of `push` to every connected proxy the change concerns. */
  pushAll(push: PushContext, change: ChangeSet, changeAt: number): void {
    for (const stream of this.streams.values()) stream.queuePush(push, change, changeAt);
  }
}

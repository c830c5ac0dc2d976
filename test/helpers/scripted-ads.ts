/**
 * An ADS server for client tests whose behaviour per stream the test scripts (answer, fail,
 * end); it records every request it was sent.
 */
import * as grpc from '@grpc/grpc-js';
import type { Decoded, XdsProtocol } from '../../src/modules/proxy/xds/xds-client';
import { decodeMessage, encodeMessage } from '../../src/modules/envoy/protos';

const ADS = '/envoy.service.discovery.v3.AggregatedDiscoveryService/';
const MESSAGES = {
  sotw: { request: 'envoy.service.discovery.v3.DiscoveryRequest', response: 'envoy.service.discovery.v3.DiscoveryResponse' },
  delta: { request: 'envoy.service.discovery.v3.DeltaDiscoveryRequest', response: 'envoy.service.discovery.v3.DeltaDiscoveryResponse' },
};

export type Stream = grpc.ServerDuplexStream<Decoded, Decoded>;

/** An ADS server whose behaviour per stream the test scripts; it records every request. */
export class ScriptedAds {
  readonly streams: { requests: Decoded[]; call: Stream }[] = [];
  private server?: grpc.Server;
  private waiters: Array<() => void> = [];
  onRequest: (stream: { requests: Decoded[]; call: Stream }, request: Decoded, index: number) => void = () => undefined;

  constructor(readonly protocol: XdsProtocol) {}

  async start(port = 0): Promise<number> {
    const m = MESSAGES[this.protocol];
    const method = this.protocol === 'sotw' ? 'StreamAggregatedResources' : 'DeltaAggregatedResources';
    const server = new grpc.Server();
    server.addService(
      {
        [method]: {
          path: ADS + method,
          requestStream: true,
          responseStream: true,
          requestSerialize: (o: object) => encodeMessage(m.request, o),
          requestDeserialize: (b: Buffer) => decodeMessage(m.request, b) as Decoded,
          responseSerialize: (o: object) => encodeMessage(m.response, o),
          responseDeserialize: (b: Buffer) => decodeMessage(m.response, b) as Decoded,
        },
      },
      {
        [method]: (call: Stream) => {
          const stream = { requests: [] as Decoded[], call };
          this.streams.push(stream);
          call.on('data', (r: Decoded) => {
            stream.requests.push(r);
            this.onRequest(stream, r, stream.requests.length - 1);
            this.notify();
          });
          call.on('error', () => undefined);
          this.notify();
        },
      },
    );
    const bound = await new Promise<number>((resolve, reject) => server.bindAsync(`127.0.0.1:${port}`, grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))));
    this.server = server;
    return bound;
  }

  stop(): void {
    this.server?.forceShutdown();
    this.server = undefined;
  }

  /** Waits until `probe` holds (re-checked on each stream or request). */
  async until(probe: () => boolean, timeoutMs = 5000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!probe()) {
      if (Date.now() > deadline) throw new Error(`not so within ${timeoutMs} ms; streams: ${JSON.stringify(this.streams.map((s) => s.requests))}`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 50);
      });
    }
  }

  private notify(): void {
    for (const w of this.waiters.splice(0)) w();
  }
}


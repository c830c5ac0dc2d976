import * as grpc from '@grpc/grpc-js';
import { decodeMessage, encodeMessage } from '../../src/modules/envoy/protos';

const ADS = '/envoy.service.discovery.v3.AggregatedDiscoveryService';
const REQUEST = 'type.googleapis.com/envoy.service.discovery.v3.DiscoveryRequest';
const RESPONSE = 'type.googleapis.com/envoy.service.discovery.v3.DiscoveryResponse';
const DELTA_REQUEST = 'type.googleapis.com/envoy.service.discovery.v3.DeltaDiscoveryRequest';
const DELTA_RESPONSE = 'type.googleapis.com/envoy.service.discovery.v3.DeltaDiscoveryResponse';

export interface Node {
  id: string;
  metadata?: Record<string, string>;
}

/** A node as an Envoy sidecar (or the built-in proxy) presents itself. */
export function sidecarNode(ip: string, namespace: string, extra: Record<string, string> = {}): Node {
  return {
    id: `sidecar~${ip}~app.${namespace}~${namespace}.svc.cluster.local`,
    metadata: { NAMESPACE: namespace, INSTANCE_IPS: ip, INTERCEPTION_MODE: 'NONE', ...extra },
  };
}

function nodeMessage(node: Node): object {
  const fields: Record<string, object> = {};
  for (const [k, v] of Object.entries(node.metadata ?? {})) fields[k] = { string_value: v };
  return { id: node.id, metadata: { fields } };
}

type Decoded = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/**
 * A raw ADS client for protocol tests: sends the requests the test writes and queues every
 * response, decoded, so a test can drive ACKs, NACKs and subscriptions step by step.
 */
class StreamClient {
  protected readonly responses: Decoded[] = [];
  private waiters: Array<() => void> = [];
  protected readonly call: grpc.ClientDuplexStream<object, Decoded>;
  private readonly client: grpc.Client;
  error: grpc.ServiceError | undefined;

  constructor(port: number, method: string, requestType: string, responseType: string, credentials?: grpc.ChannelCredentials, options: grpc.ChannelOptions = {}) {
    this.client = new grpc.Client(`127.0.0.1:${port}`, credentials ?? grpc.credentials.createInsecure(), options);
    this.call = this.client.makeBidiStreamRequest(
      `${ADS}/${method}`,
      (o: object) => encodeMessage(requestType, o),
      (b: Buffer) => decodeMessage(responseType, b) as Decoded,
    );
    this.call.on('data', (r: Decoded) => {
      this.responses.push(r);
      for (const w of this.waiters.splice(0)) w();
    });
    this.call.on('error', (e: grpc.ServiceError) => {
      this.error = e;
      for (const w of this.waiters.splice(0)) w();
    });
  }

  /** The next response (of `typeUrl` if given; others received meanwhile are dropped). */
  async next(typeUrl?: string, timeoutMs = 5000): Promise<Decoded> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const i = this.responses.findIndex((r) => !typeUrl || r.type_url === typeUrl);
      if (i >= 0) return this.responses.splice(0, i + 1)[i];
      if (this.error) throw this.error;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no ${typeUrl ?? ''} response within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  /** Resolves to undefined when nothing of `typeUrl` arrives within `ms`. */
  async nothingFor(ms: number, typeUrl?: string): Promise<Decoded | undefined> {
    try {
      return await this.next(typeUrl, ms);
    } catch {
      return undefined;
    }
  }

  close(): void {
    this.call.cancel();
    this.client.close();
  }
}

export class SotwClient extends StreamClient {
  private first = true;

  /** `credentials`/`options`: TLS to the daemon's secure port (e.g. a workload certificate). */
  constructor(port: number, private readonly node: Node, credentials?: grpc.ChannelCredentials, options?: grpc.ChannelOptions) {
    super(port, 'StreamAggregatedResources', REQUEST, RESPONSE, credentials, options);
  }

  send(request: { type_url: string; resource_names?: string[]; response_nonce?: string; version_info?: string; error_detail?: { code: number; message: string } }): void {
    const message: Record<string, unknown> = { resource_names: [], ...request };
    if (this.first) message.node = nodeMessage(this.node);
    this.first = false;
    this.call.write(message);
  }

  ack(response: Decoded, names: string[] = []): void {
    this.send({ type_url: response.type_url, resource_names: names, response_nonce: response.nonce, version_info: response.version_info });
  }

  nack(response: Decoded, message: string, names: string[] = []): void {
    this.send({ type_url: response.type_url, resource_names: names, response_nonce: response.nonce, error_detail: { code: 3, message } });
  }
}

export class DeltaClient extends StreamClient {
  private first = true;

  constructor(port: number, private readonly node: Node, credentials?: grpc.ChannelCredentials, options?: grpc.ChannelOptions) {
    super(port, 'DeltaAggregatedResources', DELTA_REQUEST, DELTA_RESPONSE, credentials, options);
  }

  send(request: {
    type_url: string;
    resource_names_subscribe?: string[];
    resource_names_unsubscribe?: string[];
    initial_resource_versions?: Record<string, string>;
    response_nonce?: string;
    error_detail?: { code: number; message: string };
  }): void {
    const message: Record<string, unknown> = { ...request };
    if (this.first) message.node = nodeMessage(this.node);
    this.first = false;
    this.call.write(message);
  }

  ack(response: Decoded): void {
    this.send({ type_url: response.type_url, response_nonce: response.nonce });
  }
}

/** Resources of a decoded response: `[name, message]` pairs (the Any's fields spread, `@type` included). */
export function resourcesOf(response: Decoded): Array<Record<string, any>> {
  // eslint-disable-line @typescript-eslint/no-explicit-any
  const list = (response.resources ?? []) as Decoded[];
  return list.map((r) => (r.resource ? { ...r.resource, __version: r.version, __name: r.name } : r));
}

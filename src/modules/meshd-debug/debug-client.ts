import type * as grpc from '@grpc/grpc-js';
import { grpcLibrary } from '../shared/grpc-library';
import { encodeMessage, messageType } from '../envoy/protos';
import { jsonToStruct } from '../envoy/struct';
import { UserError } from '../shared/user-error';

/**
 * One debug question to one daemon over xDS: an ADS stream of its own (state of the world),
 * one DiscoveryRequest of a debug type, and the first response. The stream then
 * ends; a gRPC status from the daemon (a refusal) or the deadline ends the wait.
 */

const ADS_METHOD = '/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources';
const REQUEST = 'envoy.service.discovery.v3.DiscoveryRequest';
const RESPONSE = 'envoy.service.discovery.v3.DiscoveryResponse';

/** A discovery response as received: the Anys left encoded, their decoding is the asker's. */
export interface RawDiscoveryResponse {
  versionInfo: string;
  typeUrl: string;
  nonce: string;
  /** `control_plane.identifier`, when the daemon sent one. */
  controlPlane?: string;
  resources: Array<{ typeUrl: string; value: Buffer }>;
}

/** How to reach one daemon: where, with which channel credentials, and what to present. */
export interface DaemonChannel {
  /** `host:port` to dial. */
  address: string;
  /** Says which daemon, in messages (a pod name, or the address). */
  label: string;
  credentials: grpc.ChannelCredentials;
  /** Channel options (the expected server name). */
  options: grpc.ChannelOptions;
  /** `authorization: Bearer <token>` and the like. */
  metadata: Record<string, string>;
  /** The node the stream presents itself as. */
  node: { id: string; metadata: Record<string, string> };
  timeoutMs: number;
}

/** A daemon did not answer: `code` is its gRPC status when it refused. */
export class DaemonRequestError extends UserError {
  constructor(
    message: string,
    readonly code?: grpc.status,
  ) {
    super(message);
  }
}

/** The largest answer accepted (a config dump of a big proxy is some megabytes). */
const MAX_RESPONSE_BYTES = 256 * 1024 * 1024;

export async function askDaemon(channel: DaemonChannel, typeUrl: string, resourceNames: readonly string[]): Promise<RawDiscoveryResponse> {
  const client = new (grpcLibrary().Client)(channel.address, channel.credentials, { 'grpc.max_receive_message_length': MAX_RESPONSE_BYTES, ...channel.options });
  const metadata = new (grpcLibrary().Metadata)();
  for (const [k, v] of Object.entries(channel.metadata)) metadata.set(k, v);
  try {
    return await new Promise<RawDiscoveryResponse>((resolve, reject) => {
      const call = client.makeBidiStreamRequest(
        ADS_METHOD,
        (o: object) => encodeMessage(REQUEST, o),
        (b: Buffer) => b,
        metadata,
        { deadline: Date.now() + channel.timeoutMs },
      );
      let done = false;
      const finish = (err: Error | undefined, response?: RawDiscoveryResponse) => {
        if (done) return;
        done = true;
        call.cancel();
        if (err) reject(err);
        else resolve(response!);
      };
      call.on('data', (body: Buffer) => {
        let response: RawDiscoveryResponse;
        try {
          response = decodeResponse(body);
        } catch (err) {
          finish(new DaemonRequestError(`${channel.label} sent an unreadable response: ${(err as Error).message}`));
          return;
        }
        // The stream asked one question: its first response is the answer, whatever type URL it
        // carries (daemons repeat the request's; some answer syncz as ClientConfig).
        finish(undefined, response);
      });
      call.on('error', (e: grpc.ServiceError) => finish(requestError(channel, e)));
      call.on('end', () => finish(new DaemonRequestError(`${channel.label} closed the stream without answering`)));
      call.write({
        node: { id: channel.node.id, metadata: jsonToStruct(channel.node.metadata) },
        type_url: typeUrl,
        resource_names: [...resourceNames],
        version_info: '',
        response_nonce: '',
      });
    });
  } finally {
    client.close();
  }
}

function requestError(channel: DaemonChannel, e: grpc.ServiceError): DaemonRequestError {
  if (e.code === grpcLibrary().status.DEADLINE_EXCEEDED) return new DaemonRequestError(`no answer from ${channel.label} within ${formatSeconds(channel.timeoutMs)}`, e.code);
  // grpc-js appends how it resolved the name; the reason comes first.
  const details = (e.details || e.message).replace(/\s*Resolution note:.*$/s, '').trim();
  if (e.code === grpcLibrary().status.UNAVAILABLE) return new DaemonRequestError(`cannot reach ${channel.label}: ${details}`, e.code);
  return new DaemonRequestError(`${channel.label} refused the request (${grpcLibrary().status[e.code] ?? e.code}): ${details}`, e.code);
}

function formatSeconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(3))}s`;
}

/** The response with its Anys kept encoded (decoding them is the caller's: some are JSON, not protos). */
function decodeResponse(body: Buffer): RawDiscoveryResponse {
  const type = messageType(RESPONSE);
  // Not json: Anys stay { type_url, value } instead of being expanded by type.
  const r = type.toObject(type.decode(body), { longs: String, enums: String }) as {
    version_info?: string;
    type_url?: string;
    nonce?: string;
    control_plane?: { identifier?: string };
    resources?: Array<{ type_url?: string; value?: Uint8Array }>;
  };
  return {
    versionInfo: r.version_info ?? '',
    typeUrl: r.type_url ?? '',
    nonce: r.nonce ?? '',
    ...(r.control_plane ? { controlPlane: r.control_plane.identifier ?? '' } : {}),
    resources: (r.resources ?? []).map((a) => ({ typeUrl: a.type_url ?? '', value: Buffer.from(a.value ?? new Uint8Array()) })),
  };
}

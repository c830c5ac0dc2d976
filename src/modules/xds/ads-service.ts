import * as grpc from '@grpc/grpc-js';
import { OutgoingMessage } from '../envoy/wire';
import { decodeDeltaDiscoveryRequest, decodeDiscoveryRequest } from '../envoy/discovery-requests';

/**
 * The ADS service as gRPC sees it: its method paths, the request decoding of each protocol,
 * and the channel options of the servers it runs on. Apart from the server so that what goes
 * on the wire at the gRPC level is in one place, and the server reads as composition.
 */

/** One ADS call; its requests arrive already decoded by the method's deserializer. */
export type AdsCall = grpc.ServerDuplexStream<Buffer, OutgoingMessage>;

/** State of the world (StreamAggregatedResources) or delta (DeltaAggregatedResources). */
export type AdsProtocol = 'sotw' | 'delta';

const ADS_SERVICE = 'envoy.service.discovery.v3.AggregatedDiscoveryService';

export interface AdsChannelOptions {
  maxReceiveMessageBytes: number;
  maxConcurrentStreams: number;
  keepaliveIntervalMs: number;
  keepaliveTimeoutMs: number;
  /** Undefined = unlimited. */
  maxConnectionAgeMs?: number;
}

export function channelOptions(o: AdsChannelOptions): grpc.ServerOptions {
  const options: grpc.ServerOptions = {
    'grpc.max_receive_message_length': o.maxReceiveMessageBytes,
    'grpc.max_send_message_length': -1,
    'grpc.max_concurrent_streams': o.maxConcurrentStreams,
    'grpc.keepalive_time_ms': o.keepaliveIntervalMs,
    'grpc.keepalive_timeout_ms': o.keepaliveTimeoutMs,
    'grpc.keepalive_permit_without_calls': 1,
  };
  if (o.maxConnectionAgeMs !== undefined && o.maxConnectionAgeMs < 2 ** 31 - 1) options['grpc.max_connection_age_ms'] = o.maxConnectionAgeMs;
  return options;
}

/** The ADS methods, delta only when enabled, each handing its calls to `serve`. */
export function adsService(
  deltaEnabled: boolean,
  serve: (call: AdsCall, protocol: AdsProtocol) => void,
): { methods: Record<string, grpc.MethodDefinition<Buffer, OutgoingMessage>>; handlers: grpc.UntypedServiceImplementation } {
  const passThrough = (b: Buffer) => b;
  // Responses are written encoded, in one buffer or in pieces (MessageParts): grpc-js reads
  // only `byteLength` and `copy()` of what this returns, copying it into the message frame.
  const responseSerialize = (m: OutgoingMessage) => m as Buffer;
  const method = (name: string, decode: (b: Buffer) => unknown): grpc.MethodDefinition<Buffer, OutgoingMessage> => ({
    path: `/${ADS_SERVICE}/${name}`,
    requestStream: true,
    responseStream: true,
    requestSerialize: passThrough,
    requestDeserialize: decode as (b: Buffer) => Buffer,
    responseSerialize,
    responseDeserialize: passThrough,
  });
  const methods: Record<string, grpc.MethodDefinition<Buffer, OutgoingMessage>> = { StreamAggregatedResources: method('StreamAggregatedResources', decodeDiscoveryRequest) };
  const handlers: grpc.UntypedServiceImplementation = {
    StreamAggregatedResources: (call: AdsCall) => serve(call, 'sotw'),
  };
  if (deltaEnabled) {
    methods.DeltaAggregatedResources = method('DeltaAggregatedResources', decodeDeltaDiscoveryRequest);
    handlers.DeltaAggregatedResources = (call: AdsCall) => serve(call, 'delta');
  }
  return { methods, handlers };
}

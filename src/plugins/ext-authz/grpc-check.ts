/**
 * The gRPC Authorization service (`envoy.service.auth.v3.Authorization/Check`) as the
 * built-in proxy's ext_authz calls it: one channel per endpoint (and TLS context) of the
 * provider's cluster, messages encoded with the Envoy protos.
 */
import type * as grpc from '@grpc/grpc-js';
import { grpcLibrary } from '../../modules/shared/grpc-library';
import type { SecureContext } from 'node:tls';
import { decodeMessage, encodeMessage, loadMoreEnvoyProtos } from '../../modules/envoy/protos';
import { typeUrlOf } from '../../modules/envoy/type-urls';
import type { ClusterTarget } from '../../modules/proxy/upstream/cluster-http-client';

const CHECK_REQUEST = typeUrlOf('envoy.service.auth.v3.CheckRequest');
const CHECK_RESPONSE = typeUrlOf('envoy.service.auth.v3.CheckResponse');
export const CHECK_PATH = '/envoy.service.auth.v3.Authorization/Check';

let loaded = false;

/** The Authorization service's messages, loaded into the shared Envoy proto root on first use. */
export function loadAuthorizationProtos(): void {
  if (loaded) return;
  loadMoreEnvoyProtos(['envoy/service/auth/v3/external_auth.proto']);
  loaded = true;
}

/** The Authorization service definition, for clients and (in tests) servers. */
export function authorizationServiceDefinition(): grpc.ServiceDefinition {
  loadAuthorizationProtos();
  return {
    Check: {
      path: CHECK_PATH,
      requestStream: false,
      responseStream: false,
      requestSerialize: (value: object) => encodeMessage(CHECK_REQUEST, value),
      requestDeserialize: (bytes: Buffer) => decodeMessage(CHECK_REQUEST, bytes),
      responseSerialize: (value: object) => encodeMessage(CHECK_RESPONSE, value),
      responseDeserialize: (bytes: Buffer) => decodeMessage(CHECK_RESPONSE, bytes),
    },
  };
}

type CheckClient = grpc.Client & { Check(request: object, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<Record<string, unknown>>): grpc.ClientUnaryCall };

export class AuthorizationClients {
  private readonly clients = new Map<string, { client: CheckClient; context?: SecureContext }>();
  private readonly Client = grpcLibrary().makeGenericClientConstructor(authorizationServiceDefinition(), 'Authorization') as unknown as new (
    address: string,
    credentials: grpc.ChannelCredentials,
    options: grpc.ChannelOptions,
  ) => CheckClient;

  /** Calls Check on `target`; rejects on any gRPC failure (unreachable, deadline, server error). */
  check(target: ClusterTarget, authority: string, request: object, timeoutMs: number): Promise<Record<string, unknown>> {
    const client = this.clientFor(target, authority);
    return new Promise((resolve, reject) => {
      client.Check(request, new (grpcLibrary().Metadata)(), { deadline: Date.now() + timeoutMs }, (err, response) => (err ? reject(err) : resolve(response ?? {})));
    });
  }

  close(): void {
    for (const { client } of this.clients.values()) client.close();
    this.clients.clear();
  }

  private clientFor(target: ClusterTarget, authority: string): CheckClient {
    const key = `${target.address}:${target.port}|${authority}`;
    const context = target.tls?.secureContext;
    const current = this.clients.get(key);
    // A client per TLS context: rotated certificates make a new channel.
    if (current && current.context === context) return current.client;
    current?.client.close();
    const credentials = target.tls?.secureContext
      ? grpcLibrary().credentials.createFromSecureContext(target.tls.secureContext, { checkServerIdentity: target.tls.checkServerIdentity })
      : grpcLibrary().credentials.createInsecure();
    const host = target.address.includes(':') ? `[${target.address}]` : target.address;
    const client = new this.Client(`${host}:${target.port}`, credentials, authority ? { 'grpc.default_authority': authority } : {});
    this.clients.set(key, { client, context });
    return client;
  }
}

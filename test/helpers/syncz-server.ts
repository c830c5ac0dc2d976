import * as grpc from '@grpc/grpc-js';
import { decodeMessage, encodeMessage, loadMoreEnvoyProtos } from '../../src/modules/envoy/protos';
import { jsonToStruct } from '../../src/modules/envoy/struct';

/**
 * A tiny ADS server standing for one control-plane instance: it answers a
 * `mesh.io/debug/syncz` request with a fixed DiscoveryResponse given in proto3 JSON (the
 * conformance `responses` files), and records the requests it received.
 */

const ADS_SERVICE = 'envoy.service.discovery.v3.AggregatedDiscoveryService';
const REQUEST = 'envoy.service.discovery.v3.DiscoveryRequest';
const RESPONSE = 'envoy.service.discovery.v3.DiscoveryResponse';
const CLIENT_CONFIG = 'envoy.service.status.v3.ClientConfig';

type J = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** A proto3-JSON DiscoveryResponse whose resources are ClientConfigs → our snake_case object form. */
export function responseObject(json: J): object {
  return {
    version_info: json.versionInfo ?? '',
    type_url: json.typeUrl ?? '',
    nonce: json.nonce ?? '',
    control_plane: json.controlPlane ? { identifier: json.controlPlane.identifier ?? '' } : undefined,
    resources: (json.resources ?? []).map((r: J) => ({
      type_url: r['@type'],
      value: encodeMessage(CLIENT_CONFIG, {
        node: r.node ? { id: r.node.id ?? '', metadata: jsonToStruct(r.node.metadata ?? {}) } : undefined,
        generic_xds_configs: (r.genericXdsConfigs ?? []).map((g: J) => ({ type_url: g.typeUrl ?? '', ...(g.configStatus ? { config_status: g.configStatus } : {}) })),
      }),
    })),
  };
}

export interface SynczServer {
  port: number;
  requests: J[];
  stop(): Promise<void>;
}

export async function startSynczServer(response: J): Promise<SynczServer> {
  loadMoreEnvoyProtos(['envoy/service/status/v3/csds.proto']);
  const requests: J[] = [];
  const body = encodeMessage(RESPONSE, responseObject(response));
  const server = new grpc.Server();
  server.addService(
    {
      StreamAggregatedResources: {
        path: `/${ADS_SERVICE}/StreamAggregatedResources`,
        requestStream: true,
        responseStream: true,
        requestSerialize: (b: Buffer) => b,
        requestDeserialize: (b: Buffer) => decodeMessage(REQUEST, b),
        responseSerialize: (b: Buffer) => b,
        responseDeserialize: (b: Buffer) => b,
      },
    },
    {
      StreamAggregatedResources: (call: grpc.ServerDuplexStream<J, Buffer>) => {
        call.on('data', (req: J) => {
          requests.push(req);
          if (req.type_url === 'mesh.io/debug/syncz') call.write(body);
        });
        call.on('end', () => call.end());
        call.on('error', () => undefined);
      },
    },
  );
  const port = await new Promise<number>((resolve, reject) => server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))));
  return {
    port,
    requests,
    stop: () => new Promise<void>((resolve) => server.tryShutdown(() => resolve())),
  };
}

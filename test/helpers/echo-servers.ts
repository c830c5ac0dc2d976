/** The sample echo service (src/demo/grpc-echo.ts), and what a proxyless client of the daemon needs. */
export { ECHO_PATH, EchoClient, EchoServer, startEchoServer } from '../../src/demo/grpc-echo';

/** An xDS bootstrap for a proxyless gRPC client of the daemon at `127.0.0.1:<port>`. */
export function grpcBootstrap(port: number, namespace = 'foo', ip = '127.0.0.50'): string {
  return JSON.stringify({
    xds_servers: [{ server_uri: `127.0.0.1:${port}`, channel_creds: [{ type: 'insecure' }], server_features: ['xds_v3'] }],
    node: {
      id: `sidecar~${ip}~client.${namespace}~${namespace}.svc.cluster.local`,
      metadata: { GENERATOR: 'grpc', NAMESPACE: namespace, INSTANCE_IPS: ip },
      locality: {},
    },
  });
}

export const XDS_BOOTSTRAP_OPTION = 'grpc.TEST_ONLY_DO_NOT_USE_IN_PROD.xds_bootstrap_config';

import * as grpc from '@grpc/grpc-js';

/** A tiny gRPC service for tests: `/mesh.test.Echo/Echo` answers with the server's name. */
export const ECHO_PATH = '/mesh.test.Echo/Echo';

const json = {
  serialize: (v: unknown) => Buffer.from(JSON.stringify(v)),
  deserialize: (b: Buffer) => JSON.parse(b.toString()) as unknown,
};

const ECHO_SERVICE: grpc.ServiceDefinition = {
  Echo: {
    path: ECHO_PATH,
    requestStream: false,
    responseStream: false,
    requestSerialize: json.serialize,
    requestDeserialize: json.deserialize,
    responseSerialize: json.serialize,
    responseDeserialize: json.deserialize,
  },
};

export interface EchoServer {
  name: string;
  address: string;
  port: number;
  calls: number;
  stop(): Promise<void>;
}

export async function startEchoServer(name: string, address: string): Promise<EchoServer> {
  const server = new grpc.Server();
  const state = { calls: 0 };
  server.addService(ECHO_SERVICE, {
    Echo: (call: grpc.ServerUnaryCall<unknown, unknown>, callback: grpc.sendUnaryData<unknown>) => {
      state.calls += 1;
      callback(null, { server: name });
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`${address}:0`, grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  return {
    name,
    address,
    port,
    get calls() {
      return state.calls;
    },
    stop: () => new Promise<void>((resolve) => server.tryShutdown(() => resolve())),
  };
}

/** A client of the echo service through any target (e.g. `xds:///echo.foo.svc.cluster.local:7070`). */
export class EchoClient {
  private readonly client: grpc.Client;

  constructor(target: string, options: grpc.ChannelOptions = {}) {
    this.client = new grpc.Client(target, grpc.credentials.createInsecure(), options);
  }

  call(deadlineMs = 5000): Promise<string> {
    return new Promise((resolve, reject) => {
      this.client.makeUnaryRequest(
        ECHO_PATH,
        json.serialize,
        json.deserialize,
        {},
        new grpc.Metadata(),
        { deadline: Date.now() + deadlineMs },
        (err, res) => (err ? reject(err) : resolve((res as { server: string }).server)),
      );
    });
  }

  /** Makes `n` calls one after another and counts the answers per server name. */
  async spread(n: number): Promise<Record<string, number>> {
    const counts: Record<string, number> = {};
    for (let i = 0; i < n; i++) {
      const server = await this.call();
      counts[server] = (counts[server] ?? 0) + 1;
    }
    return counts;
  }

  close(): void {
    this.client.close();
  }
}

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

/**
 * The sample gRPC echo service: `/mesh.test.Echo/Echo` answers with the name of the server
 * that took the call (JSON messages, so no proto file is needed). The demo runs its backends,
 * `echo-client.ts` calls it, and the tests use both.
 */
import * as grpc from '@grpc/grpc-js';

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

/** An echo server named `name` on `address:port` (port 0: one the system picks). */
export async function startEchoServer(name: string, address: string, port = 0): Promise<EchoServer> {
  const server = new grpc.Server();
  const state = { calls: 0 };
  server.addService(ECHO_SERVICE, {
    Echo: (call: grpc.ServerUnaryCall<unknown, unknown>, callback: grpc.sendUnaryData<unknown>) => {
      state.calls += 1;
      callback(null, { server: name });
    },
  });
  const bound = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`${address}:${port}`, grpc.ServerCredentials.createInsecure(), (err, p) =>
      err ? reject(new Error(`cannot listen on ${address}:${port}: ${err.message}`)) : resolve(p),
    ),
  );
  return {
    name,
    address,
    port: bound,
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

  /** One call; resolves with the name of the server that answered. `headers` go as request metadata. */
  call(deadlineMs = 5000, headers: Record<string, string> = {}): Promise<string> {
    const metadata = new grpc.Metadata();
    for (const [key, value] of Object.entries(headers)) metadata.set(key, value);
    return new Promise((resolve, reject) => {
      this.client.makeUnaryRequest(
        ECHO_PATH,
        json.serialize,
        json.deserialize,
        {},
        metadata,
        { deadline: Date.now() + deadlineMs },
        (err, res) => (err ? reject(err) : resolve((res as { server: string }).server)),
      );
    });
  }

  /** Makes `n` calls one after another and counts the answers per server name. */
  async spread(n: number, headers: Record<string, string> = {}): Promise<Record<string, number>> {
    const counts: Record<string, number> = {};
    for (let i = 0; i < n; i++) {
      const server = await this.call(5000, headers);
      counts[server] = (counts[server] ?? 0) + 1;
    }
    return counts;
  }

  close(): void {
    this.client.close();
  }
}

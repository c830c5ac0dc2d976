/**
 * Proxyless gRPC workloads for mTLS tests: an xDS-enabled echo server and a client, each a child
 * process (gRPC reads its bootstrap and RBAC switch from the environment once), and the mesh
 * config of the echo service (STRICT mTLS, one allowed service account).
 */
import { ChildProcess, spawn } from 'node:child_process';
import * as net from 'node:net';
import { TLS_MODE_LABEL } from '../../../../src/modules/security/mtls';

export const NS = 'foo';
export const SERVER_IP = '127.0.0.21';
export const HOST = `echo.${NS}.svc.cluster.local`;
export const TARGET = `xds:///${HOST}:7070`;

const GRPC = JSON.stringify(require.resolve('@grpc/grpc-js'));
const GRPC_XDS = JSON.stringify(require.resolve('@grpc/grpc-js-xds'));

export const ECHO_SERVICE = `{
  Echo: {
    path: '/mesh.test.Echo/Echo', requestStream: false, responseStream: false,
    requestSerialize: (v) => Buffer.from(JSON.stringify(v)), requestDeserialize: (b) => JSON.parse(b.toString()),
    responseSerialize: (v) => Buffer.from(JSON.stringify(v)), responseDeserialize: (b) => JSON.parse(b.toString()),
  },
}`;

/** An xDS-enabled echo server: serves once the daemon's listener for its address arrives. */
export const SERVER_SCRIPT = `
const grpc = require(${GRPC});
const xds = require(${GRPC_XDS});
// Registers the HTTP filters (router, RBAC) servers run too.
xds.register();
const [address] = process.argv.slice(2);
const server = new xds.XdsServer();
server.addService(${ECHO_SERVICE}, { Echo: (call, callback) => callback(null, { server: 'echo', peer: call.getPeer() }) });
server.bindAsync(address, new xds.XdsServerCredentials(grpc.ServerCredentials.createInsecure()), (err, port) => {
  if (err) { console.error('bind failed: ' + err.message); process.exit(1); }
  console.log('serving on ' + port);
});
process.on('SIGTERM', () => { server.forceShutdown(); process.exit(0); });
`;

/**
 * Calls the echo service through xDS until it gets an answer other than UNAVAILABLE (or the time
 * is up), then prints the outcome as JSON. \`xds\` credentials use the TLS settings the daemon
 * sends; \`insecure\` ones never do TLS.
 */
export const CLIENT_SCRIPT = `
const grpc = require(${GRPC});
const xds = require(${GRPC_XDS});
xds.register();
const [target, kind, timeoutMs] = process.argv.slice(2);
const creds = kind === 'xds' ? new xds.XdsChannelCredentials(grpc.credentials.createInsecure()) : grpc.credentials.createInsecure();
const client = new grpc.Client(target, creds);
const method = ${ECHO_SERVICE}.Echo;
const until = Date.now() + Number(timeoutMs);
const done = (outcome) => { console.log(JSON.stringify(outcome)); client.close(); process.exit(0); };
const attempt = () => client.makeUnaryRequest(method.path, method.requestSerialize, method.responseDeserialize, {}, new grpc.Metadata(),
  { deadline: Date.now() + 2000 }, (err, res) => {
    if (!err) return done({ code: 0, server: res.server });
    const retry = err.code === grpc.status.UNAVAILABLE || err.code === grpc.status.DEADLINE_EXCEEDED;
    if (retry && Date.now() < until) return setTimeout(attempt, 200);
    done({ code: err.code, details: err.details });
  });
attempt();
`;

export interface Outcome {
  code: number;
  server?: string;
  details?: string;
}

export const STATUS = { OK: 0, DEADLINE_EXCEEDED: 4, PERMISSION_DENIED: 7, UNAVAILABLE: 14 };

/** The echo service (GRPC 7070) and its one workload at `serverIp:serverPort` with `labels`. */
export function echoServiceYaml(serverIp: string, serverPort: number, labels: string): string {
  return `apiVersion: networking.mesh.io/v1
kind: ServiceEntry
metadata: { name: echo, namespace: ${NS} }
spec:
  hosts: [${HOST}]
  location: MESH_INTERNAL
  resolution: STATIC
  ports: [{ name: grpc, number: 7070, protocol: GRPC }]
  workloadSelector: { labels: { app: echo } }
---
apiVersion: networking.mesh.io/v1
kind: WorkloadEntry
metadata: { name: echo-1, namespace: ${NS} }
spec:
  address: ${serverIp}
  labels: ${labels}
  serviceAccount: echo
  ports: { grpc: ${serverPort} }
`;
}

export function config(serverPort: number): string {
  return `${echoServiceYaml(SERVER_IP, serverPort, `{ app: echo, ${TLS_MODE_LABEL}: mesh }`)}---
apiVersion: security.mesh.io/v1
kind: PeerAuthentication
metadata: { name: default, namespace: ${NS} }
spec:
  mtls: { mode: STRICT }
---
apiVersion: security.mesh.io/v1
kind: AuthorizationPolicy
metadata: { name: echo-callers, namespace: ${NS} }
spec:
  selector: { matchLabels: { app: echo } }
  action: ALLOW
  rules:
  - from: [{ source: { principals: [cluster.local/ns/${NS}/sa/good] } }]
`;
}

export async function freePort(host: string): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, host, resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export function node(script: string, args: string[], env: Record<string, string>): { child: ChildProcess; output: () => string } {
  const child = spawn(process.execPath, [script, ...args], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  return { child, output: () => out };
}


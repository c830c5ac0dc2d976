/**
 * Mesh mTLS and authorization between real proxyless gRPC workloads (@grpc/grpc-js-xds) and the
 * daemon: an xDS-enabled server whose namespace requires mTLS (PeerAuthentication STRICT) and
 * whose AuthorizationPolicy allows one service account, and clients with certificates of that
 * account, of another one, and without TLS. The server and each client run as their own process,
 * since gRPC reads its bootstrap and RBAC switch from the environment once.
 */
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { GRPC_SERVER_LISTENER_TEMPLATE } from '../../../../src/modules/generators/grpc/server-listener';
import { spiffeId, TLS_MODE_LABEL } from '../../../../src/modules/security/mtls';
import { RunningDaemon, startDaemon } from '../../../helpers/daemon';
import { createCa, writeWorkloadCert, WorkloadFiles } from '../../../modules/security/mtls/certs';
import { CLIENT_SCRIPT, config, freePort, node, NS, Outcome, SERVER_IP, SERVER_SCRIPT, STATUS, TARGET } from '../../../modules/security/mtls/grpc-workloads';

function bootstrap(daemonPort: number, node: { ip: string; pod: string; labels: Record<string, string> }, certs: WorkloadFiles, rootFile: string): string {
  return JSON.stringify({
    xds_servers: [{ server_uri: `127.0.0.1:${daemonPort}`, channel_creds: [{ type: 'insecure' }], server_features: ['xds_v3'] }],
    node: {
      id: `sidecar~${node.ip}~${node.pod}.${NS}~${NS}.svc.cluster.local`,
      metadata: { GENERATOR: 'grpc', NAMESPACE: NS, INSTANCE_IPS: node.ip, LABELS: node.labels },
      locality: {},
    },
    certificate_providers: {
      default: {
        plugin_name: 'file_watcher',
        config: { certificate_file: certs.certificateFile, private_key_file: certs.privateKeyFile, ca_certificate_file: rootFile, refresh_interval: '1s' },
      },
    },
    server_listener_resource_name_template: GRPC_SERVER_LISTENER_TEMPLATE,
  });
}

describe('mesh mTLS between proxyless gRPC workloads (PeerAuthentication STRICT, AuthorizationPolicy by principal)', function () {
  this.timeout(60_000);
  let dir: string;
  let daemon: RunningDaemon;
  let server: ReturnType<typeof node> | undefined;
  const bootstraps: Record<string, string> = {};

  /** Runs a client with the bootstrap of `who` and returns what its call came to. */
  async function call(who: 'good' | 'bad', creds: 'xds' | 'insecure', timeoutMs: number): Promise<Outcome> {
    const client = node(path.join(dir, 'client.js'), [TARGET, creds, String(timeoutMs)], { GRPC_XDS_BOOTSTRAP: bootstraps[who] });
    const code = await new Promise<number | null>((resolve) => client.child.on('exit', resolve));
    const line = client.output().trim().split('\n').pop() ?? '';
    expect(code, `client ${who} (${creds}) output:\n${client.output()}`).to.equal(0);
    return JSON.parse(line) as Outcome;
  }

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-mtls-'));
    const ca = await createCa();
    const rootFile = path.join(dir, 'root.crt');
    fs.writeFileSync(rootFile, ca.pem);
    const certs = {
      server: await writeWorkloadCert(ca, spiffeId('cluster.local', NS, 'echo'), dir, 'echo'),
      good: await writeWorkloadCert(ca, spiffeId('cluster.local', NS, 'good'), dir, 'good'),
      bad: await writeWorkloadCert(ca, spiffeId('cluster.local', NS, 'bad'), dir, 'bad'),
    };
    const serverPort = await freePort(SERVER_IP);
    fs.mkdirSync(path.join(dir, 'config'));
    fs.writeFileSync(path.join(dir, 'config', 'mesh.yaml'), config(serverPort));
    fs.writeFileSync(path.join(dir, 'server.js'), SERVER_SCRIPT);
    fs.writeFileSync(path.join(dir, 'client.js'), CLIENT_SCRIPT);
    daemon = await startDaemon(['--configDir', path.join(dir, 'config')]);

    const write = (name: string, text: string) => {
      const file = path.join(dir, `${name}-bootstrap.json`);
      fs.writeFileSync(file, text);
      return file;
    };
    bootstraps.server = write('server', bootstrap(daemon.grpcPort, { ip: SERVER_IP, pod: 'echo-1', labels: { app: 'echo', [TLS_MODE_LABEL]: 'mesh' } }, certs.server, rootFile));
    bootstraps.good = write('good', bootstrap(daemon.grpcPort, { ip: '127.0.0.51', pod: 'good', labels: { app: 'good' } }, certs.good, rootFile));
    bootstraps.bad = write('bad', bootstrap(daemon.grpcPort, { ip: '127.0.0.52', pod: 'bad', labels: { app: 'bad' } }, certs.bad, rootFile));

    server = node(path.join(dir, 'server.js'), [`${SERVER_IP}:${serverPort}`], { GRPC_XDS_BOOTSTRAP: bootstraps.server, GRPC_XDS_EXPERIMENTAL_RBAC: 'true' });
    const deadline = Date.now() + 15_000;
    while (!/serving on \d+/.test(server.output())) {
      if (server.child.exitCode !== null || Date.now() > deadline) throw new Error(`the gRPC server did not start serving; output:\n${server.output()}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  });

  after(async () => {
    if (process.env.SHOW_DAEMON_LOG) console.log(daemon?.output(), server?.output());
    if (server && server.child.exitCode === null) {
      server.child.kill('SIGTERM');
      await new Promise((r) => server!.child.once('exit', r));
    }
    await daemon?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('lets a client with the allowed service account in over mTLS', async () => {
    expect(await call('good', 'xds', 15_000)).to.deep.equal({ code: STATUS.OK, server: 'echo' });
  });

  it('denies a client of another service account (PERMISSION_DENIED from the server RBAC)', async () => {
    const outcome = await call('bad', 'xds', 15_000);
    expect(outcome, JSON.stringify(outcome)).to.deep.equal({ code: STATUS.PERMISSION_DENIED, details: 'Unauthorized RPC rejected' });
  });

  it('does not let a plain-text client in', async () => {
    const outcome = await call('good', 'insecure', 3_000);
    expect(outcome.code, JSON.stringify(outcome)).to.be.oneOf([STATUS.UNAVAILABLE, STATUS.DEADLINE_EXCEEDED]);
    // The server is still serving mTLS callers.
    expect(await call('good', 'xds', 10_000)).to.deep.equal({ code: STATUS.OK, server: 'echo' });
  });
});

/**
 * Issue acceptance (proxyless gRPC with xDS security): each gRPC workload has an agent that gets
 * its certificate from the mesh CA with the workload's token, writes OUTPUT_CERTS and the gRPC
 * bootstrap (GRPC_XDS_BOOTSTRAP) whose file-watcher certificate provider reads them, and carries
 * xDS to the daemon over mutual TLS. A real @grpc/grpc-js-xds server and clients use those
 * bootstraps: the allowed service account gets through over mTLS, another one gets
 * PERMISSION_DENIED from the server's RBAC.
 */
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { TLS_MODE_LABEL } from '../../../../src/modules/security/mtls';
import { RunningAgent, startAgent } from '../../../helpers/agent';
import { RunningDaemon, startDaemon } from '../../../helpers/daemon';
import { JwksServer, SigningKey, signingKey, startJwksServer, token } from '../../../helpers/jwt';
import { CLIENT_SCRIPT, config, freePort, node, NS, Outcome, SERVER_IP, SERVER_SCRIPT, STATUS, TARGET } from '../../../modules/security/mtls/grpc-workloads';
import { usesSharedLoopbackNetwork } from '../../../helpers/shared-network';

usesSharedLoopbackNetwork();

const ORCH_ISSUER = 'https://orch.test';

describe('proxyless gRPC with xDS security through the agent (bootstrap and certificates from the agent)', function () {
  this.timeout(90_000);
  let dir: string;
  let key: SigningKey;
  let jwks: JwksServer;
  let daemon: RunningDaemon;
  let server: ReturnType<typeof node> | undefined;
  const agents: Record<string, RunningAgent> = {};

  async function agentFor(sa: string, ip: string, labels: Record<string, string>): Promise<RunningAgent> {
    const agent = await startAgent({
      grpcPort: daemon.grpcPort,
      instanceIp: ip,
      namespace: NS,
      labels,
      secure: {
        secureGrpcPort: daemon.secureGrpcPort,
        rootCertPath: path.join(daemon.workDir, 'var', 'run', 'secrets', 'mesh', 'root-cert.pem'),
        token: await token(key, { iss: ORCH_ISSUER, sub: `system:serviceaccount:${NS}:${sa}`, aud: 'mesh-ca' }),
      },
      env: { MESH_META_GENERATOR: 'grpc', GRPC_XDS_BOOTSTRAP: 'grpc-bootstrap.json' },
    });
    agents[sa] = agent;
    return agent;
  }

  const bootstrapOf = (sa: string) => path.join(agents[sa].workDir, 'grpc-bootstrap.json');

  async function call(sa: string, timeoutMs: number): Promise<Outcome> {
    const client = node(path.join(dir, 'client.js'), [TARGET, 'xds', String(timeoutMs)], { GRPC_XDS_BOOTSTRAP: bootstrapOf(sa) });
    const code = await new Promise<number | null>((resolve) => client.child.on('exit', resolve));
    expect(code, `client ${sa} output:\n${client.output()}`).to.equal(0);
    return JSON.parse(client.output().trim().split('\n').pop() ?? '') as Outcome;
  }

  before(async () => {
    key = await signingKey('orch-1');
    jwks = await startJwksServer([key]);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-grpc-agent-'));
    const serverPort = await freePort(SERVER_IP);
    fs.mkdirSync(path.join(dir, 'config'));
    fs.writeFileSync(path.join(dir, 'config', 'mesh.yaml'), config(serverPort));
    fs.writeFileSync(path.join(dir, 'server.js'), SERVER_SCRIPT);
    fs.writeFileSync(path.join(dir, 'client.js'), CLIENT_SCRIPT);
    daemon = await startDaemon(['--configDir', path.join(dir, 'config')], { JWT_RULE: JSON.stringify({ issuer: ORCH_ISSUER, jwksUri: jwks.url }) });
    await agentFor('echo', SERVER_IP, { app: 'echo', [TLS_MODE_LABEL]: 'mesh' });
    await agentFor('good', '127.0.0.51', { app: 'good' });
    await agentFor('bad', '127.0.0.52', { app: 'bad' });

    server = node(path.join(dir, 'server.js'), [`${SERVER_IP}:${serverPort}`], { GRPC_XDS_BOOTSTRAP: bootstrapOf('echo'), GRPC_XDS_EXPERIMENTAL_RBAC: 'true' });
    const deadline = Date.now() + 20_000;
    while (!/serving on \d+/.test(server.output())) {
      if (server.child.exitCode !== null || Date.now() > deadline) throw new Error(`the gRPC server did not start serving; output:\n${server.output()}\n${agents.echo.output()}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  });

  after(async () => {
    if (server && server.child.exitCode === null) {
      server.child.kill('SIGTERM');
      await new Promise((r) => server!.child.once('exit', r));
    }
    for (const a of Object.values(agents)) await a.stop();
    await daemon?.stop();
    await jwks?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('writes a gRPC bootstrap that reaches the daemon through the agent, with certificate providers over OUTPUT_CERTS', () => {
    const bootstrap = JSON.parse(fs.readFileSync(bootstrapOf('good'), 'utf8'));
    expect(bootstrap.xds_servers[0].server_uri).to.match(/^unix:\/\/\/.*XDS$/);
    expect(bootstrap.node.metadata.GENERATOR).to.equal('grpc');
    const provider = bootstrap.certificate_providers.default;
    expect(provider.plugin_name).to.equal('file_watcher');
    for (const f of ['certificate_file', 'private_key_file', 'ca_certificate_file']) expect(fs.existsSync(provider.config[f]), f).to.equal(true);
  });

  it('lets the allowed service account in over mTLS', async () => {
    expect(await call('good', 20_000)).to.deep.equal({ code: STATUS.OK, server: 'echo' });
  });

  it('denies another service account with PERMISSION_DENIED', async () => {
    const outcome = await call('bad', 20_000);
    expect(outcome, JSON.stringify(outcome)).to.deep.equal({ code: STATUS.PERMISSION_DENIED, details: 'Unauthorized RPC rejected' });
  });
});

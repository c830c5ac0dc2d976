/**
 * The README's proxyless gRPC example: @grpc/grpc-js-xds with samples/grpc-bootstrap.json (only
 * its daemon address changed, to the test daemon's port) against a daemon on samples/config,
 * calling the sample echo service's backends at their sample addresses, through the client
 * script the package ships (dist/src/demo/echo-client.js).
 */
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { RunningDaemon, startDaemon } from '../../helpers/daemon';
import { EchoServer, startEchoServer } from '../../helpers/echo-servers';
import { REPO_ROOT } from '../../helpers/run-cli';

const SAMPLE_BOOTSTRAP = path.join(REPO_ROOT, 'samples', 'grpc-bootstrap.json');
const ECHO_CLIENT = path.join(REPO_ROOT, 'dist', 'src', 'demo', 'echo-client.js');

function echoClient(bootstrap: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [ECHO_CLIENT, ...args], { env: { PATH: process.env.PATH ?? '', GRPC_XDS_BOOTSTRAP: bootstrap }, timeout: 30_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe('samples/grpc-bootstrap.json with @grpc/grpc-js-xds against a daemon on samples/config', function () {
  this.timeout(60_000);
  let dir: string;
  let bootstrap: string;
  let daemon: RunningDaemon;
  let backends: EchoServer[];

  before(async () => {
    // Where samples/config/echo.yaml puts the echo service's workloads (the service port, 7070).
    backends = [await startEchoServer('echo-v1', '127.0.0.21', 7070), await startEchoServer('echo-v2', '127.0.0.22', 7070)];
    daemon = await startDaemon(['--configDir', path.join(REPO_ROOT, 'samples', 'config')]);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-grpc-sample-'));
    bootstrap = path.join(dir, 'grpc-bootstrap.json');
    const sample = JSON.parse(fs.readFileSync(SAMPLE_BOOTSTRAP, 'utf8'));
    sample.xds_servers[0].server_uri = `127.0.0.1:${daemon.grpcPort}`;
    fs.writeFileSync(bootstrap, JSON.stringify(sample));
  });

  after(async () => {
    await daemon?.stop();
    await Promise.all((backends ?? []).map((b) => b.stop()));
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('names the daemon the demo and the README run (xDS on 127.0.0.1:15010)', () => {
    const sample = JSON.parse(fs.readFileSync(SAMPLE_BOOTSTRAP, 'utf8'));
    expect(sample.xds_servers[0].server_uri).to.equal('127.0.0.1:15010');
    expect(sample.node.metadata.GENERATOR).to.equal('grpc');
  });

  it('resolves xds:///echo.foo.svc.cluster.local:7070 and calls its v1 and v2 backends', async () => {
    const r = await echoClient(bootstrap, ['--calls', '20']);
    expect(r.code, r.stderr).to.equal(0);
    const counts = /^20 calls to xds:\/\/\/echo\.foo\.svc\.cluster\.local:7070: (.*)\n$/.exec(r.stdout)?.[1];
    expect(counts, r.stdout).to.match(/^(echo-v1 \d+(, echo-v2 \d+)?|echo-v2 \d+)$/);
    expect(backends[0].calls + backends[1].calls).to.equal(20);
  });

  it('follows the sample VirtualService: x-canary: true goes to v2', async () => {
    const r = await echoClient(bootstrap, ['--canary', '--calls', '5']);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.equal('5 calls to xds:///echo.foo.svc.cluster.local:7070 (x-canary: true): echo-v2 5\n');
  });

  it('says what to check when the bootstrap is missing, exiting 1', async () => {
    const r = await echoClient(path.join(dir, 'nope.json'), ['--calls', '1']);
    expect(r.code).to.equal(1);
    expect(r.stderr).to.match(/^echo-client: call 1 of 1 to xds:\/\/\/echo\.foo\.svc\.cluster\.local:7070 failed: .*\(is GRPC_XDS_BOOTSTRAP the path of a bootstrap file/);
  });
});

/**
 * Start-up against the orchestrator: an unusable orchestrator config stops the daemon with one
 * line naming the flag and file; an API server that fails at first keeps the daemon not ready,
 * saying what it waits for, until it answers.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { expect } from 'chai';
import { httpGet } from '../../helpers/http';
import { startOrchWorld } from '../../helpers/orch-mesh';
import { startProgram } from '../../helpers/program';
import { runCli } from '../../helpers/run-cli';

const LOOPBACK = ['--grpcAddr', '127.0.0.1:0', '--httpAddr', '127.0.0.1:0', '--monitoringAddr', '127.0.0.1:0', '--secureGRPCAddr', '127.0.0.1:0', '--httpsAddr', '127.0.0.1:0'];

describe('daemon start-up on the orchestrator (end to end)', function () {
  this.timeout(60_000);

  it('refuses an unusable orchestrator config or rate limit with one line naming the flag', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-orchconfig-'));
    try {
      const missing = await runCli('pilot-discovery', ['discovery', ...LOOPBACK, '--orchconfig', path.join(dir, 'nope')], { cwd: dir });
      expect(missing.code).to.equal(1);
      expect(missing.stderr).to.match(/^Error: --orchconfig: orchestrator config \S+nope: ENOENT[^\n]*\n$/);
      fs.writeFileSync(path.join(dir, 'garbage'), 'just: [a, list\n');
      const garbage = await runCli('pilot-discovery', ['discovery', ...LOOPBACK, '--orchconfig', path.join(dir, 'garbage')], { cwd: dir });
      expect(garbage.code).to.equal(1);
      expect(garbage.stderr).to.match(/^Error: --orchconfig: orchestrator config \S+garbage: not YAML[^\n]*\n$/);
      const burst = await runCli('pilot-discovery', ['discovery', ...LOOPBACK, '--orchconfig', path.join(dir, 'garbage'), '--orchApiBurst', '0'], { cwd: dir });
      expect(burst.code).to.equal(1);
      expect(burst.stderr).to.equal('Error: --orchApiBurst must be at least 1 when --orchApiQPS is positive, got 0\n');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('stays not ready while the API server fails, saying what it waits for, and gets ready once it answers', async () => {
    const world = await startOrchWorld({ simulateCluster: false });
    const work = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-daemon-'));
    world.server.faults.failRequests(503, { match: /\/services|\/virtualservices/ });
    const daemon = startProgram('pilot-discovery', ['discovery', ...LOOPBACK, '--orchconfig', world.kubeconfig], {}, work);
    try {
      const http = Number(/(\d+)$/.exec(await daemon.waitForLog(/HTTP discovery listening on \S+:\d+/))![1]);
      const waiting = await daemon.waitForLog(/not ready: waiting for the orchestrator API to list [^\n]*/, 15_000);
      expect(waiting).to.match(/\bService \(v1\) \(GET \/api\/v1\/services: 503 ServiceUnavailable/);
      expect(waiting).to.match(/VirtualService \(networking\.mesh\.io\/v1\) \(GET [^)]*503/);
      expect(waiting).to.not.match(/EndpointSlice|Pod|AuthorizationPolicy/);
      expect((await httpGet(http, '/ready')).status).to.equal(503);
      world.server.faults.clear();
      await daemon.waitForLog(/daemon ready/, 40_000);
      expect((await httpGet(http, '/ready')).status).to.equal(200);
    } finally {
      await daemon.stop();
      await world.close();
      fs.rmSync(work, { recursive: true, force: true });
    }
  });
});

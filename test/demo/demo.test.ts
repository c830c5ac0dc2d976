/**
 * `npm start` (node dist/src/demo/main.js) as a newcomer runs it: every printed command is
 * checked and works (the proxyless gRPC client included, with samples/grpc-bootstrap.json as
 * shipped), Ctrl-C stops everything and removes the logs; when a component fails, the logs stay
 * and the demo says where. The demo binds its documented fixed ports, so none may be taken.
 */
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { RunningProgram, startProgram } from '../helpers/program';
import { REPO_ROOT } from '../helpers/run-cli';
import { usesSharedLoopbackNetwork } from '../helpers/shared-network';

usesSharedLoopbackNetwork();

// startProgram runs bin/<program>; the demo is what `npm start` runs instead.
const DEMO = path.relative(path.join(REPO_ROOT, 'bin'), path.join(REPO_ROOT, 'dist', 'src', 'demo', 'main.js'));
const READY = /Ctrl-C stops the demo\./;

function logDirOf(demo: RunningProgram): string {
  return /the logs are in (\S+) while the demo runs/.exec(demo.output())![1];
}

/** Runs a printed command line with sh from the repository, as a user pasting it would. */
function shell(command: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile('sh', ['-c', command], { cwd: REPO_ROOT, timeout: 30_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe('npm start (the local demo)', function () {
  this.timeout(120_000);

  describe('a run that works', () => {
    let demo: RunningProgram;
    before(async () => {
      demo = startProgram(DEMO, [], {});
      await demo.waitForLog(READY, 90_000);
    });
    after(async () => {
      await demo?.stop('SIGINT');
    });

    it('prints each command checked once: four curl commands and the proxyless gRPC client', () => {
      const out = demo.output();
      expect(out).to.not.match(/EXPECTED|FAILED|demo failed/);
      expect(out.match(/\(checked: /g)).to.have.length(5);
      expect(out).to.match(/^# proxyless gRPC .*\(checked: 10 calls to xds:\/\/\/echo\.foo\.svc\.cluster\.local:7070: echo-v\d \d+(, echo-v\d \d+)?\)$/m);
      expect(out).to.match(/^echo gRPC backends: echo-v1 on 127\.0\.0\.21:7070, echo-v2 on 127\.0\.0\.22:7070$/m);
      expect(fs.existsSync(path.join(logDirOf(demo), 'daemon.log'))).to.equal(true);
    });

    it('the printed gRPC client command works when pasted (here with --canary: v2 only)', async () => {
      const command = /^GRPC_XDS_BOOTSTRAP=\S+ node \S+$/m.exec(demo.output())![0];
      const r = await shell(`${command} --canary`);
      expect(r.code, r.stderr).to.equal(0);
      expect(r.stdout).to.equal('10 calls to xds:///echo.foo.svc.cluster.local:7070 (x-canary: true): echo-v2 10\n');
    });

    it('a printed curl command works when pasted', async () => {
      const command = /^curl .* http:\/\/127\.0\.0\.10:8000\/headers$/m.exec(demo.output())![0];
      const r = await shell(command);
      expect(r.stdout).to.equal('200\n');
    });

    it('Ctrl-C stops it, exiting 0, and removes its log directory', async () => {
      const logDir = logDirOf(demo);
      const code = await Promise.race([demo.stop('SIGINT'), new Promise((r) => setTimeout(() => r('still running after 10 s'), 10_000))]);
      expect(code).to.equal(0);
      expect(demo.output()).to.match(/stopping the demo\n$/);
      expect(fs.existsSync(logDir), logDir).to.equal(false);
    });
  });

  it('keeps the logs and says where when a component fails, exiting 1', async () => {
    // The agent's status port, taken: the agent exits at start-up.
    const blocker = net.createServer();
    await new Promise<void>((resolve, reject) => blocker.once('error', reject).listen(15021, resolve));
    const demo = startProgram(DEMO, [], {});
    let logDir: string | undefined;
    try {
      const closed = new Promise((r) => demo.process.once('close', r));
      await Promise.race([closed, new Promise((r) => setTimeout(r, 90_000))]);
      expect(demo.process.exitCode, demo.output()).to.equal(1);
      expect(demo.output()).to.match(/pilot-agent exited \(1\); its log:\n.*EADDRINUSE.*15021/);
      logDir = /the logs are kept in (\S+)\n$/.exec(demo.output())?.[1];
      expect(logDir, demo.output()).to.equal(logDirOf(demo));
      expect(fs.readFileSync(path.join(logDir!, 'agent.log'), 'utf8')).to.match(/EADDRINUSE/);
    } finally {
      await demo.stop('SIGINT');
      blocker.close();
      if (logDir) fs.rmSync(logDir, { recursive: true, force: true });
    }
  });
});

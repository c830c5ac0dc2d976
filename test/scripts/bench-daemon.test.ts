/**
 * How bench:push starts the daemon under test (bench/push/daemon.ts), with the real daemon:
 * it learns the ports from the start-up lines however much output follows them, and a daemon
 * that never gets ready is not left running.
 */
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { BenchError, Daemon } from '../../bench/push/daemon';

describe('bench:push: starting the daemon under test', function () {
  this.timeout(60_000);
  let dir: string;

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-bench-daemon-'));
    fs.mkdirSync(path.join(dir, 'config'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const options = (preload: string, startTimeoutMs: number) => {
    const script = path.join(dir, 'preload.js');
    fs.writeFileSync(script, preload);
    return {
      configDir: path.join(dir, 'config'),
      logFile: path.join(dir, 'daemon.log'),
      nodeArgs: ['--require', script],
      env: { ...process.env, PID_FILE: path.join(dir, 'pid') },
      startTimeoutMs,
    };
  };

  it('finds each start-up line even when more output than its tail holds follows it', async () => {
    // After every line saying where the daemon listens, 300 KB of other output (as V8's
    // tracing flags write): the bench keeps the last 200 KB of output only.
    const flood = `
      const fs = require('fs');
      const write = fs.writeSync;
      const filler = Buffer.from(('x'.repeat(99) + '\\n').repeat(3000));
      const writeAll = (fd, buf) => {
        while (buf.length > 0) {
          try { buf = buf.subarray(write(fd, buf)); } catch (e) { if (e.code !== 'EAGAIN') throw e; }
        }
      };
      fs.writeSync = function (fd, data, ...rest) {
        const n = write.call(fs, fd, data, ...rest);
        const whole = n === (typeof data === 'string' ? Buffer.byteLength(data) : data.length);
        if ((fd === 1 || fd === 2) && whole && /listening on/.test(String(data))) writeAll(fd, filler);
        return n;
      };`;
    const daemon = await Daemon.start(options(flood, 30_000));
    try {
      expect(daemon.grpcPort).to.be.greaterThan(0);
      expect(daemon.monitoringPort).to.be.greaterThan(0);
      expect(daemon.monitoringPort).to.not.equal(daemon.grpcPort);
    } finally {
      await daemon.stop();
    }
    expect(fs.statSync(path.join(dir, 'daemon.log')).size, 'the filler was written').to.be.greaterThan(600_000);
  });

  it('stops a daemon that does not get ready in time instead of leaving it running', async () => {
    // The daemon notes its pid, then blocks before it logs anything.
    const hang = `
      require('fs').writeFileSync(process.env.PID_FILE, String(process.pid));
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);`;
    const started = Date.now();
    const error = await Daemon.start(options(hang, 1_500)).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).to.be.instanceOf(BenchError);
    expect((error as Error).message).to.match(/the daemon did not log .*listening on.* within 1500 ms/);
    const pid = Number(fs.readFileSync(path.join(dir, 'pid'), 'utf8'));
    expect(() => process.kill(pid, 0), `daemon pid ${pid} still running`).to.throw(/ESRCH/);
    expect(Date.now() - started).to.be.lessThan(10_000);
  });
});

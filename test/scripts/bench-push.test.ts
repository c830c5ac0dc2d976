/**
 * bench:push end to end at a toy size (5 services, 4 proxies): the daemon's three phases and
 * the transport-limit run, as `npm run bench:push -- --json` reports them. Slowness is never
 * checked (a benchmark, not a timed test); that every client converged in both runs and the
 * limit run carried the daemon's bytes is.
 */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { REPO_ROOT } from '../helpers/run-cli';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function bench(args: string[], timeoutMs: number): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(REPO_ROOT, 'dist', 'bench', 'push', 'main.js'), ...args], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGTERM'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('bench:push (bench/push)', function () {
  this.timeout(90_000);

  it('measures the daemon and the transport limit on a toy mesh', async () => {
    const run = await bench(['--services', '5', '--proxies', '4', '--workers', '2', '--quiet-ms', '300', '--json'], 80_000);
    expect(run.code, run.stderr).to.equal(0);
    const res = JSON.parse(run.stdout);
    expect(res.failures).to.deep.equal([]);
    expect(res.options).to.include({ services: 5, clients: 4, workers: 2, limit: true });
    expect(res.phases.map((p: { name: string }) => p.name)).to.deep.equal(['connect', 'full push', 'endpoint push']);
    for (const p of res.phases) {
      expect(p.clientsUpdated, p.name).to.equal(4);
      expect(p.bytesTotal, p.name).to.be.greaterThan(0);
      expect(p.daemonRssPeakBytes, p.name).to.be.greaterThan(0);
      expect(p.limit.clientsUpdated, `${p.name} (limit)`).to.equal(4);
      expect(p.limit.bytesTotal, `${p.name}: the limit run writes the daemon's bytes`).to.equal(p.bytesTotal);
    }
    expect(res.phases[0].daemonCpuSeconds).to.be.greaterThan(0);
    expect(res.phases[1].expect).to.deep.equal(['cds', 'lds']);
    expect(res.phases[2].expect).to.deep.equal(['eds']);
    expect(run.stderr).to.match(/transport-limit server pid \d+ on 127\.0\.0\.1:\d+: \d+ responses of 4 clients/);
  });

  it('refuses a bad size with one line naming the flag', async () => {
    const run = await bench(['--proxies', 'many'], 20_000);
    expect(run.code).to.equal(2);
    expect(run.stderr.trim()).to.equal('--proxies needs a non-negative number, got many');
  });
});

/**
 * The bench:* npm scripts compile with bench/tsconfig.json before they run, a narrower build
 * than `npm run build`'s (which includes bench/** too): a type the benches reach through a
 * test helper but that config leaves out breaks every bench while the main build stays green.
 */
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { REPO_ROOT } from '../helpers/run-cli';

describe('bench/tsconfig.json (the bench:* scripts build)', function () {
  this.timeout(120_000);

  it('type-checks every bench', () => {
    const tsc = path.join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    const r = spawnSync(process.execPath, [tsc, '-p', path.join(REPO_ROOT, 'bench', 'tsconfig.json'), '--noEmit'], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 110_000 });
    expect(r.status, r.stdout + r.stderr).to.equal(0);
  });
});

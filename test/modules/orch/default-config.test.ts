import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { OrchApiServer, startOrchApiServer } from '../../helpers/orch-api';
import { runCli } from '../../helpers/run-cli';

/*
 * meshctl without --orchconfig finds the orchestrator as the orchestrator's own CLI does:
 * ORCHCONFIG, else ~/.kube/config, else the in-cluster account. Proved by a pod lookup that
 * reaches the in-process API server (its "not found" names the namespace).
 */
describe('meshctl: the orchestrator config when --orchconfig is empty', function () {
  this.timeout(60_000);
  let server: OrchApiServer;
  let home: string;
  let file: string;

  before(async () => {
    server = await startOrchApiServer({ simulateCluster: false });
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-home-'));
    fs.mkdirSync(path.join(home, '.kube'));
    file = server.writeKubeconfigFile(path.join(home, '.kube'));
  });
  after(async () => {
    await server?.stop();
    fs.rmSync(home, { recursive: true, force: true });
  });

  const lookup = (env: Record<string, string>) => runCli('meshctl', ['proxy-config', 'cluster', 'ghost', '-n', 'foo'], { env, timeoutMs: 30_000 });

  it('uses ~/.kube/config when it exists', async () => {
    fs.copyFileSync(file, path.join(home, '.kube', 'config'));
    try {
      const r = await lookup({ HOME: home });
      expect([r.code, r.stderr]).to.deep.equal([1, 'Error: pod ghost not found in namespace foo\n']);
    } finally {
      fs.rmSync(path.join(home, '.kube', 'config'));
    }
  });

  it('uses the first existing file of ORCHCONFIG, and names a missing one when none exists', async () => {
    const found = await lookup({ HOME: home, ORCHCONFIG: `${path.join(home, 'nope')}:${file}` });
    expect([found.code, found.stderr]).to.deep.equal([1, 'Error: pod ghost not found in namespace foo\n']);
    const missing = await lookup({ HOME: home, ORCHCONFIG: path.join(home, 'nope') });
    expect(missing.code).to.equal(1);
    expect(missing.stderr).to.contain(`orchestrator config ${path.join(home, 'nope')}`);
  });

  it('--orchconfig wins over both', async () => {
    const r = await runCli('meshctl', ['proxy-config', 'cluster', 'ghost', '-n', 'bar', '--orchconfig', file], { env: { HOME: home, ORCHCONFIG: path.join(home, 'nope') }, timeoutMs: 30_000 });
    expect([r.code, r.stderr]).to.deep.equal([1, 'Error: pod ghost not found in namespace bar\n']);
  });

  it('falls back to the in-cluster account without either, and says what is missing', async () => {
    const r = await lookup({ HOME: home });
    expect(r.code).to.equal(1);
    expect(r.stderr).to.equal(
      'Error: cannot read pod ghost in namespace foo: no orchestrator config: no --orchconfig, no ORCHCONFIG, no ~/.kube/config, and not inside a cluster (KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set)\n',
    );
  });
});

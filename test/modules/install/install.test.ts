import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawn } from 'node:child_process';
import { REPO_ROOT } from '../../helpers/run-cli';
import { kubectl } from '../../helpers/orch-mesh';
import { OrchApiServer, startOrchApiServer } from '../../helpers/orch-api';
import { runCli } from '../../helpers/run-cli';

/** meshctl install / manifest install / uninstall against the in-process API server, checked with the real kubectl. */
describe('meshctl install and uninstall on a cluster', function () {
  this.timeout(180_000);
  let server: OrchApiServer;
  let dir: string;
  let kubeconfig: string;
  const meshctl = (...args: string[]) => runCli('meshctl', [...args, '--orchconfig', kubeconfig], { timeoutMs: 120_000 });
  const meshObjects = async () => {
    const r = await kubectl(kubeconfig, ['get', 'namespaces,serviceaccounts,configmaps,services,deployments,clusterroles,clusterrolebindings,mutatingwebhookconfigurations,validatingwebhookconfigurations,customresourcedefinitions', '-A', '-l', 'app.kubernetes.io/part-of=mesh', '-o', 'name']);
    expect(r.code, r.stderr).to.equal(0);
    return r.stdout.split('\n').filter(Boolean).sort();
  };
  const writes = () => server.requests.log.filter((r) => ['create', 'update', 'patch', 'delete'].includes(r.verb ?? '') && (r.status ?? 0) < 300 && !(r.resource ?? '').includes('status')).length;

  beforeEach(async () => {
    server = await startOrchApiServer({ simulateCluster: true });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-install-'));
    kubeconfig = server.writeKubeconfigFile(dir);
  });
  afterEach(async () => {
    await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('install -y --set profile=demo applies with progress and waits; a second install changes nothing; uninstall --purge leaves nothing', async () => {
    const first = await meshctl('install', '-y', '--set', 'profile=demo', '--verify');
    expect(first.code, first.stderr).to.equal(0);
    expect(first.stderr).to.include('✔ CRDs applied and established (10)');
    expect(first.stderr).to.include('Deployment mesh-system/meshd created');
    expect(first.stderr).to.include('✔ Deployment mesh-system/meshd ready (1/1 available)');
    expect(first.stderr).to.include('✔ verified: all 20 objects exist');
    expect(first.stderr).to.not.include('\x1b['); // no spinner when stderr is not a terminal
    const installed = await meshObjects();
    expect(installed).to.include.members(['deployment.apps/meshd', 'service/meshd', 'configmap/mesh', 'configmap/mesh-sidecar-injector', 'namespace/mesh-system', 'mutatingwebhookconfiguration.admissionregistration.k8s.io/mesh-sidecar-injector']);
    expect(installed).to.have.length(20);
    const applies = server.requests.log.filter((r) => r.verb === 'patch' && r.contentType?.includes('apply-patch'));
    expect(applies).to.have.length(20);
    expect(applies.every((r) => /fieldManager.*meshctl/.test(JSON.stringify(r.query)) && /force.*true/.test(JSON.stringify(r.query)))).to.equal(true);
    const mesh = await kubectl(kubeconfig, ['get', 'configmap', 'mesh', '-n', 'mesh-system', '-o', 'jsonpath={.data.mesh}']);
    expect(mesh.stdout).to.include('accessLogFile: /dev/stdout');

    const before = server.resourceVersion;
    const second = await meshctl('install', '-y', '--set', 'profile=demo');
    expect(second.code, second.stderr).to.equal(0);
    expect(second.stderr).to.include('✔ Installation complete (no changes)');
    expect(server.resourceVersion).to.equal(before);

    const purge = await meshctl('uninstall', '--purge', '-y', '-v');
    expect(purge.code, purge.stderr).to.equal(0);
    expect(purge.stdout).to.include('removed Deployment mesh-system/meshd');
    expect(purge.stdout).to.include('removed CustomResourceDefinition virtualservices.networking.mesh.io');
    expect(purge.stdout).to.include('✔ Removed 20 objects');
    expect(await meshObjects()).to.deep.equal([]);
  });

  it('manifest generate | kubectl apply -f - yields the same objects as install', async () => {
    const gen = await meshctl('manifest', 'generate', '--set', 'profile=demo');
    expect(gen.code, gen.stderr).to.equal(0);
    const applied = await kubectl(kubeconfig, ['apply', '--server-side', '-f', '-'], gen.stdout);
    // kubectl applies in file order; the CRDs come first, so the rest finds its kinds.
    expect(applied.code, applied.stderr).to.equal(0);
    const viaKubectl = await meshObjects();
    const purge = await meshctl('uninstall', '--purge', '-y');
    expect(purge.code, purge.stderr).to.equal(0);
    expect(await meshObjects()).to.deep.equal([]);
    const inst = await meshctl('manifest', 'install', '-y', '--set', 'profile=demo');
    expect(inst.code, inst.stderr).to.equal(0);
    expect(await meshObjects()).to.deep.equal(viaKubectl);
  });

  it('--dry-run changes nothing; without -y and without a terminal it stops with a clear error; validation errors stop unless --force', async () => {
    const start = writes();
    const dry = await meshctl('install', '--dry-run', '--set', 'profile=minimal');
    expect(dry.code, dry.stderr).to.equal(0);
    expect(dry.stderr).to.include('Deployment mesh-system/meshd');
    expect(dry.stderr).to.include('dry run: nothing was changed');
    const noTty = await meshctl('install', '--set', 'profile=minimal');
    expect(noTty.code).to.equal(1);
    expect(noTty.stderr).to.match(/stdin is not a terminal; pass -y \(--skip-confirmation\)/);
    const invalid = await meshctl('install', '-y', '--set', 'components.pilot.enabled=maybe');
    expect(invalid.code).to.equal(1);
    expect(invalid.stderr).to.match(/--set components\.pilot\.enabled=maybe: spec\.components\.pilot\.enabled must be a boolean/);
    expect(writes()).to.equal(start);
    expect(await meshObjects()).to.deep.equal([]);
    const forced = await meshctl('install', '-y', '--force', '--set', 'profile=minimal', '--set', 'components.pilot.colour=blue', '--readiness-timeout', '60s');
    expect(forced.code, forced.stderr).to.equal(0);
    expect(forced.stderr).to.match(/warning \(--force\).*unknown field spec\.components\.pilot\.colour/);
    const udry = await meshctl('uninstall', '--purge', '--dry-run');
    expect(udry.code, udry.stderr).to.equal(0);
    expect(udry.stderr).to.include('dry run: nothing was changed');
    expect(await meshObjects()).to.have.length(20);
  });

  it('revisions install side by side; uninstall --revision removes only that revision', async () => {
    expect((await meshctl('install', '-y', '--set', 'profile=minimal')).code).to.equal(0);
    const canary = await meshctl('install', '-y', '--set', 'profile=minimal', '--revision', 'canary');
    expect(canary.code, canary.stderr).to.equal(0);
    const both = await meshObjects();
    expect(both).to.include.members(['deployment.apps/meshd', 'deployment.apps/meshd-canary', 'configmap/mesh-canary']);
    const rev = await kubectl(kubeconfig, ['get', 'deployment', 'meshd-canary', '-n', 'mesh-system', '-o', 'jsonpath={.metadata.labels.mesh\\.io/rev}']);
    expect(rev.stdout).to.equal('canary');
    const remove = await meshctl('uninstall', '--revision', 'canary', '-y');
    expect(remove.code, remove.stderr).to.equal(0);
    const after = await meshObjects();
    expect(after.filter((n) => n.includes('canary'))).to.deep.equal([]);
    expect(after).to.include.members(['deployment.apps/meshd', 'namespace/mesh-system', 'customresourcedefinition.apiextensions.k8s.io/virtualservices.networking.mesh.io']);
  });

  it('components.cni.enabled=true adds the CNI DaemonSet, waited for until ready on every node', async () => {
    const r = await meshctl('install', '-y', '--set', 'profile=minimal', '--set', 'components.cni.enabled=true');
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stderr).to.include('✔ DaemonSet mesh-system/mesh-cni-node ready (1/1 ready)');
    const ds = await kubectl(kubeconfig, ['get', 'daemonset', 'mesh-cni-node', '-n', 'mesh-system', '-o', 'jsonpath={.status.numberReady}']);
    expect(ds.stdout).to.equal('1');
  });

  it('on a terminal it asks: n changes nothing, y installs with a spinner', async () => {
    // `script` gives meshctl a terminal; the answer is typed once the question shows.
    const onTerminal = (answer: string) =>
      new Promise<{ code: number | null; out: string }>((resolve) => {
        const child = spawn('script', ['-qec', `${process.execPath} bin/meshctl install --set profile=minimal --orchconfig ${kubeconfig}`, '/dev/null'], { cwd: REPO_ROOT });
        let out = '';
        let asked = false;
        const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
        child.stdout.on('data', (d) => {
          out += d;
          if (!asked && out.includes('Proceed? [y/N]')) {
            asked = true;
            child.stdin.write(`${answer}\n`);
          }
        });
        child.on('close', (code) => {
          clearTimeout(timer);
          resolve({ code, out });
        });
      });
    const no = await onTerminal('n');
    expect(no.code).to.equal(1);
    expect(no.out).to.include('cancelled: nothing was changed');
    expect(await meshObjects()).to.deep.equal([]);
    const yes = await onTerminal('y');
    expect(yes.code, yes.out.slice(-500)).to.equal(0);
    expect(yes.out).to.match(/\r\x1b\[2K[|/\\-] applying /);
    expect(yes.out).to.include('✔ Installation complete (20 objects created or configured)');
  });

  it('uninstall -f removes what that operator resource renders; nothing left to remove is said, not an error', async () => {
    expect((await meshctl('install', '-y', '--set', 'profile=minimal', '--set', 'components.cni.enabled=true')).code).to.equal(0);
    const file = path.join(dir, 'cni-off.yaml');
    fs.writeFileSync(file, 'apiVersion: install.mesh.io/v1alpha1\nkind: MeshOperator\nspec:\n  profile: minimal\n');
    const r = await meshctl('uninstall', '-y', '-v', '-f', file);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.include('removed Deployment mesh-system/meshd');
    expect(r.stdout).to.not.include('mesh-cni-node');
    const left = await meshObjects();
    expect(left).to.include.members(['serviceaccount/mesh-cni-node', 'namespace/mesh-system']);
    expect(left).to.not.include('deployment.apps/meshd');
    const again = await meshctl('uninstall', '-y', '-f', file);
    expect(again.code, again.stderr).to.equal(0);
    expect(again.stdout).to.match(/nothing to remove/);
  });

  it('gives up after --readiness-timeout naming what is not ready (no controllers make the Deployment available)', async () => {
    const still = await startOrchApiServer({ simulateCluster: false });
    try {
      const r = await runCli('meshctl', ['install', '-y', '--set', 'profile=minimal', '--readiness-timeout', '2s', '--orchconfig', still.writeKubeconfigFile(dir)], { timeoutMs: 120_000 });
      expect(r.code).to.equal(1);
      expect(r.stderr).to.match(/not ready after 2s \(--readiness-timeout\): Deployment mesh-system\/meshd 0\/1 available/);
    } finally {
      await still.stop();
    }
  });
});

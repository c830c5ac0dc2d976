import { expect } from 'chai';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { type OrchApiServer, startOrchApiServer } from '../../helpers/orch-api';
import { waitUntil } from '../../helpers/orch-api-tests/support';
import { httpGet } from '../../helpers/http';
import { RunningProgram, startProgram } from '../../helpers/program';
import { REPO_ROOT } from '../../helpers/run-cli';
import { skipWithoutNetns, TestNetns } from '../../modules/iptables/netns';
import { addPod, brokenPod, getPod, modifyPod, pod } from '../../modules/cni/repair/pods';

/*
 * A node as the mesh sees it: `install-cni` running against an orchestrator API (the
 * in-process one), installing the plug-in into the node's CNI directories and repairing pods
 * the install race broke; then the container runtime running the plug-in it installed, with
 * the network config it wrote, for a new pod.
 */

const FIXTURES = path.join(REPO_ROOT, 'test', 'fixtures', 'conformance', 'cni');

describe('a node: install-cni with race repair, then the installed plug-in on a pod', function () {
  this.timeout(60_000);
  let orch: OrchApiServer;
  let root: string;
  let dirs: { net: string; bin: string; run: string };
  let installer: RunningProgram;
  let monitoringPort: number;

  before(async () => {
    // No simulated kubelet or controllers: the pods change only as this test and the installer change them.
    orch = await startOrchApiServer({ simulateCluster: false });
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-node-'));
    dirs = { net: path.join(root, 'net.d'), bin: path.join(root, 'bin'), run: path.join(root, 'run') };
    fs.mkdirSync(dirs.net);
    fs.copyFileSync(path.join(FIXTURES, 'list.conflist'), path.join(dirs.net, '10-dbnet.conflist'));
    // A second network config of lower priority: untouched while the first exists.
    fs.copyFileSync(path.join(FIXTURES, 'bridge.conf'), path.join(dirs.net, '20-bridge.conf'));
    const orchconfig = orch.writeKubeconfigFile(root);

    // Pods that exist before the installer starts: the race already happened to some.
    await addPod(orch, brokenPod('broken', { node: 'node-a' }));
    await addPod(orch, brokenPod('elsewhere', { node: 'node-b' }));
    await addPod(orch, brokenPod('no-sidecar', { node: 'node-a', sidecar: false }));
    await addPod(orch, pod('healthy', { node: 'node-a' }));

    installer = startProgram('install-cni', ['--repair-label-pods', '--repair-node-name', 'node-a'], {
      MOUNTED_CNI_NET_DIR: dirs.net,
      MOUNTED_CNI_BIN_DIR: dirs.bin,
      CNI_AGENT_RUN_DIR: dirs.run,
      ORCHCONFIG: orchconfig,
      POD_NAMESPACE: 'mesh-system',
      MONITORING_PORT: '0',
      LOG_LEVEL: 'info',
    });
    const line = await installer.waitForLog(/monitoring port \d+/);
    monitoringPort = Number(/\d+$/.exec(line)![0]);
    await installer.waitForLog(/mesh CNI plug-in installed in/);
  });

  after(async () => {
    await installer?.stop('SIGKILL');
    await orch?.stop();
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('labels the broken pod of its node exactly once, and only it', async () => {
    await waitUntil('the broken pod is labelled', () => getPod(orch, 'default', 'broken')?.metadata?.labels?.['cni.mesh.io/uninitialized'] === 'true', 10_000);
    // A later change to the pod must not label it again.
    await modifyPod(orch, 'default', 'broken', (p) => (p.metadata!.annotations = { ...p.metadata!.annotations, touched: 'yes' }));
    await new Promise((r) => setTimeout(r, 500));
    const patches = orch.requests.log.filter((r) => r.method === 'PATCH');
    expect(patches.map((r) => r.path)).to.deep.equal(['/api/v1/namespaces/default/pods/broken/status']);
    for (const name of ['elsewhere', 'no-sidecar', 'healthy']) expect(getPod(orch, 'default', name)?.metadata?.labels ?? {}).not.to.have.property('cni.mesh.io/uninitialized');
    expect(orch.requests.log.filter((r) => r.method === 'DELETE')).to.have.length(0);
    const metrics = await httpGet(monitoringPort, '/metrics');
    expect(metrics.body).to.match(/^mesh_cni_repair_pods_repaired_total\{type="label"\} 1$/m);
  });

  it('the plug-in it installed, run by the runtime with the config it wrote, captures a new pod', async function () {
    skipWithoutNetns(this);
    await addPod(orch, {
      metadata: { name: 'web', namespace: 'shop', annotations: { 'sidecar.mesh.io/status': '{}', 'traffic.sidecar.mesh.io/excludeOutboundPorts': '5432' } },
      spec: { nodeName: 'node-a', containers: [{ name: 'web', image: 'shop/web' }, { name: 'mesh-proxy', image: 'mesh/proxy' }] },
    });
    // What a runtime does for the chain: each plug-in gets the list's name and version, and the previous result.
    const list = JSON.parse(fs.readFileSync(path.join(dirs.net, '10-dbnet.conflist'), 'utf8'));
    const entry = list.plugins.find((p: { type: string }) => p.type === 'mesh-cni');
    const prevResult = { cniVersion: list.cniVersion, ips: [{ address: '10.1.0.9/16', gateway: '10.1.0.1' }] };
    const ns = new TestNetns(`meshnode${process.pid % 10000}`, 200 + (process.pid % 50)).create();
    try {
      const result = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
        const child = spawn(path.join(dirs.bin, 'mesh-cni'), [], {
          env: {
            PATH: process.env.PATH ?? '',
            CNI_COMMAND: 'ADD',
            CNI_CONTAINERID: 'web-sandbox',
            CNI_NETNS: `/var/run/netns/${ns.name}`,
            CNI_IFNAME: 'eth0',
            CNI_PATH: dirs.bin,
            CNI_ARGS: 'IgnoreUnknown=1;K8S_POD_NAMESPACE=shop;K8S_POD_NAME=web',
          },
        });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (d) => (stdout += d));
        child.stderr.on('data', (d) => (stderr += d));
        child.on('error', reject);
        child.on('close', (code) => resolve({ code, stdout, stderr }));
        child.stdin.end(JSON.stringify({ ...entry, name: list.name, cniVersion: list.cniVersion, prevResult }));
      });
      expect(result.stderr).not.to.match(/error/);
      expect(result.code).to.equal(0);
      expect(JSON.parse(result.stdout)).to.deep.equal(prevResult);
      const nat = ns.exec('iptables-save', '-t', 'nat');
      expect(nat).to.contain('-A MESH_OUTPUT -p tcp -m tcp --dport 5432 -j RETURN');
      expect(nat).to.contain('-A MESH_OUTPUT -j MESH_REDIRECT');
      // The plug-in read the pod with the orchestrator config the installer wrote for it.
      expect(orch.requests.log.some((r) => r.method === 'GET' && r.path === '/api/v1/namespaces/shop/pods/web')).to.equal(true);
    } finally {
      ns.destroy();
    }
  });

  it('the config it chained into deleted: installed into the next one within a second', async () => {
    expect(fs.readFileSync(path.join(dirs.net, '20-bridge.conf'), 'utf8')).to.equal(fs.readFileSync(path.join(FIXTURES, 'bridge.conf'), 'utf8'));
    const deletedAt = Date.now();
    fs.rmSync(path.join(dirs.net, '10-dbnet.conflist'));
    const next = path.join(dirs.net, '20-bridge.conflist');
    await waitUntil('the mesh plug-in is chained into 20-bridge.conflist', () => fs.existsSync(next) && fs.readFileSync(next, 'utf8').includes('"mesh-cni"'), 1000);
    expect(Date.now() - deletedAt).to.be.lessThan(1000);
    expect(JSON.parse(fs.readFileSync(next, 'utf8')).plugins.map((p: { type: string }) => p.type)).to.deep.equal(['bridge', 'mesh-cni']);
  });

  it('SIGTERM: removes its entry, leaves the node\'s own plug-ins', async () => {
    expect(await installer.stop('SIGTERM')).to.equal(0);
    const list = JSON.parse(fs.readFileSync(path.join(dirs.net, '20-bridge.conflist'), 'utf8'));
    expect(list.plugins.map((p: { type: string }) => p.type)).to.deep.equal(['bridge']);
  });
});

import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import { PLUGIN_ORCHCONFIG_FILE } from '../../../src/modules/cni/plugin-location';
import { type OrchApiServer, startOrchApiServer } from '../../helpers/orch-api';
import { REPO_ROOT } from '../../helpers/run-cli';
import { skipWithoutNetns, TestNetns } from '../iptables/netns';
import { addPod } from './repair/pods';

/*
 * The mesh CNI plug-in run as a container runtime runs it: bin/mesh-cni with the request in
 * CNI_* variables and the network config (the installer's, conformance mesh-cni.conf, plus
 * the previous plug-in's result) on stdin, against a real network namespace and an
 * in-process orchestrator API holding the pods.
 */

const FIXTURE = path.join(REPO_ROOT, 'test', 'fixtures', 'conformance', 'cni', 'mesh-cni.conf');
const PREV_RESULT = {
  cniVersion: '0.4.0',
  interfaces: [{ name: 'eth0', sandbox: '/var/run/netns/x' }],
  ips: [{ version: '4', address: '10.1.0.5/16', gateway: '10.1.0.1', interface: 0 }],
  dns: {},
};

interface PluginRun {
  code: number | null;
  stdout: string;
  stderr: string;
  json?: Record<string, unknown>;
}

function runPlugin(env: Record<string, string>, stdin: string): Promise<PluginRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(REPO_ROOT, 'bin', 'mesh-cni')], {
      env: { PATH: process.env.PATH ?? '', CNI_PATH: '/opt/cni/bin', CNI_IFNAME: 'eth0', ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => {
      let json: Record<string, unknown> | undefined;
      try {
        json = stdout.trim() ? JSON.parse(stdout) : undefined;
      } catch {
        json = undefined;
      }
      resolve({ code, stdout, stderr, json });
    });
    child.stdin.end(stdin);
  });
}

function sidecarPod(name: string, annotations: Record<string, string> = {}, env: Record<string, string> = {}): V1Pod {
  return {
    metadata: { name, namespace: 'shop', annotations: { 'sidecar.mesh.io/status': '{"containers":["mesh-proxy"]}', ...annotations } },
    spec: {
      nodeName: 'node-a',
      containers: [
        { name: 'app', image: 'shop/app' },
        { name: 'mesh-proxy', image: 'mesh/proxy', securityContext: { runAsUser: 1337, runAsGroup: 1337 }, env: Object.entries(env).map(([n, value]) => ({ name: n, value })) },
      ],
    },
  };
}

describe('mesh CNI plug-in (bin/mesh-cni)', function () {
  this.timeout(60_000);
  let orch: OrchApiServer;
  let runDir: string;
  let config: Record<string, unknown>;

  before(async () => {
    // No simulated kubelet: the pods stay as written here.
    orch = await startOrchApiServer({ simulateCluster: false });
    runDir = mkdtempSync(path.join(tmpdir(), 'mesh-cni-run-'));
    writeFileSync(path.join(runDir, PLUGIN_ORCHCONFIG_FILE), orch.kubeConfig().exportConfig(), { mode: 0o600 });
    config = { ...JSON.parse(readFileSync(FIXTURE, 'utf8')), cni_agent_run_dir: runDir, exclude_namespaces: ['mesh-system'], plugin_log_level: 'info' };
    await addPod(orch, sidecarPod('captured', { 'traffic.sidecar.mesh.io/excludeInboundPorts': '8443', 'traffic.sidecar.mesh.io/includeOutboundIPRanges': '10.96.0.0/12' }));
    await addPod(orch, sidecarPod('dns', {}, { MESH_META_DNS_CAPTURE: 'true' }));
    await addPod(orch, { metadata: { name: 'plain', namespace: 'shop' }, spec: { containers: [{ name: 'app', image: 'shop/app' }] } });
    await addPod(orch, sidecarPod('opted-out', { 'sidecar.mesh.io/inject': 'false' }));
    await addPod(orch, sidecarPod('bad-ports', { 'traffic.sidecar.mesh.io/excludeInboundPorts': '8443,https' }));
  });

  after(async () => {
    await orch?.stop();
    rmSync(runDir, { recursive: true, force: true });
  });

  const stdinWith = (extra: Record<string, unknown> = {}) => JSON.stringify({ ...config, ...extra });
  const request = (command: string, netns: string, pod?: string) => ({
    CNI_COMMAND: command,
    CNI_CONTAINERID: `c-${pod ?? 'none'}`,
    CNI_NETNS: netns,
    CNI_ARGS: pod ? `IgnoreUnknown=1;K8S_POD_NAMESPACE=shop;K8S_POD_NAME=${pod};K8S_POD_INFRA_CONTAINER_ID=c-${pod}` : 'IgnoreUnknown=1',
  });

  it('VERSION lists the supported spec versions', async () => {
    const result = await runPlugin({ CNI_COMMAND: 'VERSION' }, JSON.stringify({ cniVersion: '1.0.0' }));
    expect(result.code).to.equal(0);
    expect(result.json).to.deep.equal({ cniVersion: '1.0.0', supportedVersions: ['0.1.0', '0.2.0', '0.3.0', '0.3.1', '0.4.0', '1.0.0', '1.1.0'] });
  });

  it('bad requests get a CNI error object and a non-zero exit', async () => {
    const notJson = await runPlugin(request('ADD', '/var/run/netns/none', 'captured'), '{"cniVersion": ');
    expect(notJson.code).to.equal(1);
    expect(notJson.json).to.include({ code: 6 });
    expect(String(notJson.json?.msg)).to.match(/^network config on stdin is not JSON/);
    const noNetns = await runPlugin({ CNI_COMMAND: 'ADD', CNI_CONTAINERID: 'c1' }, stdinWith());
    expect(noNetns.json).to.include({ code: 4, msg: 'CNI_NETNS is required for ADD' });
    const badVersion = await runPlugin(request('ADD', '/x', 'captured'), stdinWith({ cniVersion: '9.9.9' }));
    expect(badVersion.json).to.include({ code: 1 });
  });

  it('DEL succeeds with no output', async () => {
    const result = await runPlugin(request('DEL', '', 'captured'), stdinWith());
    expect(result.code).to.equal(0);
    expect(result.stdout).to.equal('');
  });

  it('a pod the API does not know is an error naming it', async () => {
    const result = await runPlugin(request('ADD', '/var/run/netns/none', 'ghost'), stdinWith({ prevResult: PREV_RESULT }));
    expect(result.code).to.equal(1);
    expect(result.json).to.include({ code: 100, msg: 'pod shop/ghost not found in the orchestrator API' });
  });

  describe('in a network namespace', () => {
    let ns: TestNetns;

    before(function () {
      skipWithoutNetns(this);
    });
    beforeEach(() => {
      ns = new TestNetns(`meshcni${process.pid % 10000}`, 150 + (process.pid % 50)).create();
    });
    afterEach(() => ns?.destroy());

    const netnsPath = () => `/var/run/netns/${ns.name}`;

    it('ADD for a pod with the sidecar captures its traffic per its annotations and passes prevResult on', async () => {
      const result = await runPlugin(request('ADD', netnsPath(), 'captured'), stdinWith({ prevResult: PREV_RESULT }));
      expect(result.stderr).to.contain('pod shop/captured: traffic capture set up');
      expect(result.code).to.equal(0);
      expect(result.json).to.deep.equal({ ...PREV_RESULT, cniVersion: '0.3.1' });
      const nat = ns.exec('iptables-save', '-t', 'nat');
      expect(nat).to.contain('-A PREROUTING -p tcp -j MESH_INBOUND');
      for (const port of ['8443', '15020', '15021', '15090']) expect(nat).to.contain(`-A MESH_INBOUND -p tcp -m tcp --dport ${port} -j RETURN`);
      expect(nat).to.contain('-A MESH_OUTPUT -d 10.96.0.0/12 -j MESH_REDIRECT');
      expect(nat).not.to.contain('MESH_OUTPUT_DNS');

      const checked = await runPlugin(request('CHECK', netnsPath(), 'captured'), stdinWith({ prevResult: PREV_RESULT }));
      expect(checked.code).to.equal(0);
      expect(checked.stdout).to.equal('');
    });

    it('DNS capture follows the proxy container\'s MESH_META_DNS_CAPTURE, capturing all DNS', async () => {
      const result = await runPlugin(request('ADD', netnsPath(), 'dns'), stdinWith({ prevResult: PREV_RESULT }));
      expect(result.code).to.equal(0);
      expect(ns.exec('iptables-save', '-t', 'nat')).to.contain('-A MESH_OUTPUT_DNS -p udp -m udp --dport 53 -j REDIRECT --to-ports 15053');
    });

    for (const [pod, why] of [
      ['plain', 'no sidecar.mesh.io/status annotation'],
      ['opted-out', 'sidecar.mesh.io/inject is "false"'],
    ]) {
      it(`ADD passes a pod through untouched: ${pod} (${why})`, async () => {
        const result = await runPlugin(request('ADD', netnsPath(), pod), stdinWith({ prevResult: PREV_RESULT }));
        expect(result.code).to.equal(0);
        expect(result.json).to.deep.equal({ ...PREV_RESULT, cniVersion: '0.3.1' });
        expect(result.stderr).to.contain(why);
        expect(ns.exec('iptables-save')).not.to.contain('MESH_');
      });
    }

    it('an excluded namespace, or a container that is no pod, passes through without asking the API', async () => {
      const before = orch.requests.log.length;
      const excluded = await runPlugin({ ...request('ADD', netnsPath(), 'captured'), CNI_ARGS: 'K8S_POD_NAMESPACE=mesh-system;K8S_POD_NAME=meshd-1' }, stdinWith({ prevResult: PREV_RESULT }));
      expect(excluded.code).to.equal(0);
      const noPod = await runPlugin(request('ADD', netnsPath()), stdinWith());
      expect(noPod.code).to.equal(0);
      expect(noPod.json).to.deep.equal({ cniVersion: '0.3.1' });
      expect(orch.requests.log.length).to.equal(before);
      expect(ns.exec('iptables-save')).not.to.contain('MESH_');
    });

    it('a bad annotation fails ADD naming the annotation, and changes nothing', async () => {
      const result = await runPlugin(request('ADD', netnsPath(), 'bad-ports'), stdinWith({ prevResult: PREV_RESULT }));
      expect(result.code).to.equal(1);
      expect(result.json).to.include({
        code: 101,
        msg: 'pod shop/bad-ports: annotation traffic.sidecar.mesh.io/excludeInboundPorts: "https" is not a port (0-65535) or a port range (a:b)',
      });
      expect(ns.exec('iptables-save')).not.to.contain('MESH_');
    });

    it('CHECK fails when a captured pod\'s namespace lost its rules', async () => {
      const result = await runPlugin(request('CHECK', netnsPath(), 'captured'), stdinWith({ prevResult: PREV_RESULT }));
      expect(result.code).to.equal(1);
      expect(result.json).to.include({ code: 103 });
    });
  });
});

import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { formatCniJson } from '../../../../src/modules/cni/install';
import { CNI_PLUGIN_MAIN } from '../../../../src/modules/cni/plugin-location';
import { loadOrchConfig } from '../../../../src/modules/orch';
import { httpGet, metricValue } from '../../../helpers/http';
import { RunningProgram, startProgram } from '../../../helpers/program';
import { REPO_ROOT, runCli } from '../../../helpers/run-cli';

const FIXTURES = path.join(REPO_ROOT, 'test', 'fixtures', 'conformance', 'cni');
const fixture = (name: string) => fs.readFileSync(path.join(FIXTURES, name), 'utf8');
const CA_DATA = Buffer.from('-----BEGIN CERTIFICATE-----\nMIIBtest\n-----END CERTIFICATE-----\n').toString('base64');

interface Node {
  root: string;
  net: string;
  bin: string;
  run: string;
  orchconfig: string;
}

/** A node's directories in a temp dir, and the installer's own orchestrator config (no API server is needed to install). */
function makeNode(): Node {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-install-cni-'));
  const node = { root, net: path.join(root, 'net.d'), bin: path.join(root, 'bin'), run: path.join(root, 'run'), orchconfig: path.join(root, 'orchconfig') };
  fs.mkdirSync(node.net);
  fs.writeFileSync(
    node.orchconfig,
    `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443", certificate-authority-data: ${CA_DATA}}}]
users: [{name: u, user: {token: installer-token}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`,
  );
  return node;
}

function nodeEnv(node: Node, more: Record<string, string> = {}): Record<string, string> {
  return {
    MOUNTED_CNI_NET_DIR: node.net,
    MOUNTED_CNI_BIN_DIR: node.bin,
    CNI_AGENT_RUN_DIR: node.run,
    ORCHCONFIG: node.orchconfig,
    POD_NAMESPACE: 'my-namespace',
    LOG_LEVEL: 'debug',
    ...more,
  };
}

/** Starts the real `install-cni` under `umask`, waits for the first installation, returns it with its metrics port. */
async function startInstaller(env: Record<string, string>, args: string[], umask: number): Promise<{ program: RunningProgram; port: number }> {
  const previous = process.umask(umask);
  let program: RunningProgram;
  try {
    program = startProgram('install-cni', args, env);
  } finally {
    process.umask(previous);
  }
  const line = await program.waitForLog(/monitoring port \d+/);
  await program.waitForLog(/mesh CNI plug-in installed in/);
  return { program, port: Number(/\d+$/.exec(line)![0]) };
}

async function metrics(port: number): Promise<{ ready: number; installs: number; text: string }> {
  const res = await httpGet(port, '/metrics');
  expect(res.status).to.equal(200);
  return { ready: metricValue(res, 'mesh_cni_install_ready'), installs: metricValue(res, 'mesh_cni_installs_total'), text: res.body };
}

async function within(ms: number, what: string, predicate: () => boolean | Promise<boolean>): Promise<number> {
  const start = Date.now();
  while (!(await predicate())) {
    if (Date.now() - start > ms) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return Date.now() - start;
}

/**
 * Replaces `file` in one step (a temp file next to the node's folders, then a rename), so the
 * installer never reads a torn write: cases that expect what it says of the content must have
 * it see that content, not an empty file that writeFileSync truncated first.
 */
const replaceFile = (file: string, text: string) => {
  const tmp = path.join(path.dirname(path.dirname(file)), `.replace-${process.pid}-${path.basename(file)}`);
  fs.writeFileSync(tmp, text);
  fs.renameSync(tmp, file);
};
const readJson = (file: string) => JSON.parse(fs.readFileSync(file, 'utf8'));
const pluginTypes = (file: string): string[] => readJson(file).plugins.map((p: { type: string }) => p.type);
const hasMesh = (file: string) => fs.existsSync(file) && pluginTypes(file).includes('mesh-cni');
const mode = (file: string) => fs.statSync(file).mode & 0o7777;

describe('install-cni end to end (chained)', function () {
  this.timeout(30_000);
  let node: Node;
  let program: RunningProgram;
  let port: number;
  let conflist: string;
  let notes: string;

  before(async () => {
    node = makeNode();
    fs.writeFileSync(path.join(node.net, 'bridge.conf'), fixture('bridge.conf'));
    notes = path.join(node.net, 'notes.txt');
    fs.writeFileSync(notes, 'not a network config\n');
    conflist = path.join(node.net, 'bridge.conflist');
    ({ program, port } = await startInstaller(nodeEnv(node, { MONITORING_PORT: '0' }), [], 0));
  });

  after(async () => {
    await program?.stop('SIGKILL');
    fs.rmSync(node.root, { recursive: true, force: true });
  });

  it('turns bridge.conf into a conflist ending with the mesh plug-in, other files untouched', () => {
    const expected = readJson(path.join(FIXTURES, 'bridge.conf.golden'));
    expected.plugins[1].cni_agent_run_dir = node.run;
    expect(readJson(conflist)).to.deep.equal(expected);
    expect(fs.readFileSync(conflist, 'utf8')).to.equal(formatCniJson(expected));
    expect(fs.existsSync(path.join(node.net, 'bridge.conf'))).to.equal(false);
    expect(fs.readFileSync(notes, 'utf8')).to.equal('not a network config\n');
  });

  it('installs the executable launcher (0755) that runs the plug-in of this installation', () => {
    const exe = path.join(node.bin, 'mesh-cni');
    expect(mode(exe)).to.equal(0o755);
    const script = fs.readFileSync(exe, 'utf8');
    expect(script.split('\n')[0]).to.equal('#!/usr/bin/env node');
    expect(script).to.contain(`require(${JSON.stringify(CNI_PLUGIN_MAIN)});`);
  });

  it("writes the plug-in's orchestrator config with mode 0600 (umask 0), pointing at the installer's API server", () => {
    const file = path.join(node.run, 'mesh-cni-orchconfig');
    expect(mode(file)).to.equal(0o600);
    const config = loadOrchConfig(file);
    expect(config.getCurrentCluster()).to.include({ server: 'https://127.0.0.1:6443', caData: CA_DATA });
    expect(config.getCurrentUser()!.token).to.equal('installer-token');
  });

  it('serves mesh_cni_install_ready 1 and mesh_cni_installs_total 1 on the monitoring port', async () => {
    const m = await metrics(port);
    expect(m.ready).to.equal(1);
    expect(m.installs).to.equal(1);
    expect(m.text).to.match(/^mesh_build\{component="install-cni",tag="[^"]+"\} 1$/m);
    expect(m.text).to.match(/^# TYPE mesh_cni_repair_pods_repaired_total counter$/m);
  });

  it('the conflist deleted: not ready; the node network config back → re-installed within a second', async () => {
    fs.rmSync(conflist);
    await within(1000, 'not ready', async () => (await metrics(port)).ready === 0);
    // The node's network plug-in writes its config again.
    fs.writeFileSync(path.join(node.net, 'bridge.conf'), fixture('bridge.conf'));
    const took = await within(1000, 're-installed', () => hasMesh(conflist));
    expect(took).to.be.below(1000);
    await within(1000, 'counted', async () => (await metrics(port)).installs === 2);
    expect((await metrics(port)).ready).to.equal(1);
  });

  it('the conflist rewritten without the mesh entry → the entry is back within a second, other plugins kept', async () => {
    replaceFile(conflist, fixture('list.conflist'));
    await within(1000, 're-installed', () => hasMesh(conflist));
    expect(pluginTypes(conflist)).to.deep.equal(['bridge', 'tuning', 'mesh-cni']);
    await within(1000, 'counted', async () => (await metrics(port)).installs === 3);
  });

  it('a malformed conflist: the error names the file, the file stays byte for byte, installed once fixed', async () => {
    const since = program.output().length;
    const broken = '{"name": "dbnet", "plugins": [';
    replaceFile(conflist, broken);
    const line = await program.waitForLog(/\terror\tcni-agent\t.*/, 2000, since);
    expect(line).to.contain(`${conflist}: invalid JSON at line 1 column 31: expected a value, found end of input; left untouched`);
    await new Promise((r) => setTimeout(r, 1500)); // more than one periodic check
    expect(fs.readFileSync(conflist, 'utf8')).to.equal(broken);
    expect((await metrics(port)).ready).to.equal(0);
    replaceFile(conflist, fixture('list.conflist'));
    await within(1000, 'installed after the fix', () => hasMesh(conflist));
    await within(1000, 'ready', async () => (await metrics(port)).ready === 1);
    expect((await metrics(port)).installs).to.equal(4);
  });

  it('SIGTERM: the mesh entry removed, other plugins and files untouched, exit code 0', async () => {
    const code = await program.stop('SIGTERM');
    expect(code, program.output()).to.equal(0);
    expect(readJson(conflist)).to.deep.equal(JSON.parse(fixture('list.conflist')));
    expect(fs.readFileSync(notes, 'utf8')).to.equal('not a network config\n');
    expect(fs.readdirSync(node.net).sort()).to.deep.equal(['bridge.conflist', 'notes.txt']);
    expect(fs.existsSync(path.join(node.bin, 'mesh-cni'))).to.equal(false);
    expect(fs.existsSync(path.join(node.run, 'mesh-cni-orchconfig'))).to.equal(false);
  });
});

describe('install-cni end to end (standalone)', function () {
  this.timeout(30_000);
  let node: Node;
  let program: RunningProgram;
  let port: number;
  let own: string;

  before(async () => {
    node = makeNode();
    fs.writeFileSync(path.join(node.net, '10-bridge.conf'), fixture('bridge.conf'));
    own = path.join(node.net, 'YY-mesh-cni.conflist');
    // A restrictive umask must not change the modes: 0755 executable, ORCHCONFIG_MODE 416 = 0640.
    ({ program, port } = await startInstaller(nodeEnv(node, { CHAINED_CNI_PLUGIN: 'false', ORCHCONFIG_MODE: '416' }), ['--monitoring-port', '0'], 0o077));
  });

  after(async () => {
    await program?.stop('SIGKILL');
    fs.rmSync(node.root, { recursive: true, force: true });
  });

  it('writes its own conflist holding only the mesh plug-in; the node config untouched', () => {
    const plugin = readJson(path.join(FIXTURES, 'mesh-cni.conf'));
    delete plugin.cniVersion;
    plugin.cni_agent_run_dir = node.run;
    expect(readJson(own)).to.deep.equal({ cniVersion: '0.3.1', name: 'mesh-cni', plugins: [plugin] });
    expect(fs.readFileSync(path.join(node.net, '10-bridge.conf'), 'utf8')).to.equal(fixture('bridge.conf'));
    expect(mode(own)).to.equal(0o644);
  });

  it('sets the modes it was asked for whatever the umask', () => {
    expect(mode(path.join(node.bin, 'mesh-cni'))).to.equal(0o755);
    expect(mode(path.join(node.run, 'mesh-cni-orchconfig'))).to.equal(0o640);
  });

  it('its file deleted → re-written within a second', async () => {
    fs.rmSync(own);
    const took = await within(1000, 're-written', () => fs.existsSync(own) && pluginTypes(own).includes('mesh-cni'));
    expect(took).to.be.below(1000);
    await within(1000, 'counted', async () => (await metrics(port)).installs === 2);
  });

  it('SIGTERM: its file removed, the node config untouched, exit code 0', async () => {
    expect(await program.stop('SIGTERM'), program.output()).to.equal(0);
    expect(fs.readdirSync(node.net)).to.deep.equal(['10-bridge.conf']);
    expect(fs.readFileSync(path.join(node.net, '10-bridge.conf'), 'utf8')).to.equal(fixture('bridge.conf'));
  });
});

describe('install-cni: bad values stop it with one clear line', function () {
  this.timeout(30_000);
  let node: Node;
  before(() => {
    node = makeNode();
    fs.writeFileSync(path.join(node.net, 'bridge.conf'), fixture('bridge.conf'));
  });
  after(() => fs.rmSync(node.root, { recursive: true, force: true }));

  const cases: Array<[string, string[], Record<string, string>, string | RegExp]> = [
    ['a file mode out of range', ['--orchconfig-mode', '99999'], {}, 'Error: invalid --orchconfig-mode 99999: a file mode is a decimal integer from 0 to 4095 (384 = 0600)\n'],
    ['a file mode that is not a number', [], { ORCHCONFIG_MODE: '0600x' }, /^Error: invalid value "0600x" for setting ORCHCONFIG_MODE: expected an integer/],
    ['an unknown log level', [], { LOG_LEVEL: 'loud' }, 'Error: invalid LOG_LEVEL "loud": expected one of debug, info, warn, error, fatal, none\n'],
    [
      'a plug-in config that is not JSON',
      ['--cni-network-config', '{"type": "mesh-cni", }'],
      {},
      'Error: --cni-network-config: invalid JSON at line 1 column 22: expected a property name in double quotes, found "}"\n',
    ],
    ['a missing orchestrator config', [], { ORCHCONFIG: '/nonexistent/orchconfig' }, /^Error: ORCHCONFIG: orchestrator config \/nonexistent\/orchconfig: ENOENT.*\n$/],
  ];
  for (const [what, args, env, message] of cases) {
    it(what, async () => {
      const r = await runCli('install-cni', ['--monitoring-port', '0', ...args], { env: nodeEnv(node, env) });
      expect(r.code).to.equal(1);
      if (typeof message === 'string') expect(r.stderr).to.equal(message);
      else expect(r.stderr).to.match(message);
      expect(r.stderr.trim().split('\n')).to.have.length(1);
      // Nothing was installed.
      expect(fs.readdirSync(node.net)).to.deep.equal(['bridge.conf']);
      expect(fs.existsSync(node.bin)).to.equal(false);
    });
  }
});

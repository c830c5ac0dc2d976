import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CniInstaller, CniInstallerOptions, parseMeshPluginConfig } from '../../../../src/modules/cni/install';
import { CniMetrics } from '../../../../src/modules/cni/metrics';
import type { ScopedLogger } from '../../../../src/modules/logging';
import { OrchConfigError } from '../../../../src/modules/orch';
import { REPO_ROOT } from '../../../helpers/run-cli';

const FIXTURES = path.join(REPO_ROOT, 'test', 'fixtures', 'conformance', 'cni');
const fixture = (name: string) => fs.readFileSync(path.join(FIXTURES, name), 'utf8');
const PLUGIN = parseMeshPluginConfig(fixture('mesh-cni.conf'), 'mesh-cni.conf');

interface Recorded {
  level: string;
  msg: string;
}

function recordingLog(lines: Recorded[]): ScopedLogger {
  const at = (level: string) => (msg: string) => void lines.push({ level, msg });
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error'), fatal: at('fatal'), enabled: () => true } as unknown as ScopedLogger;
}

async function waitFor(what: string, predicate: () => boolean, timeoutMs = 2000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const pluginTypes = (file: string) => (JSON.parse(fs.readFileSync(file, 'utf8')).plugins as Array<{ type: string }>).map((p) => p.type);

describe('CniInstaller', () => {
  let root: string;
  let net: string;
  let logs: Recorded[];
  let metrics: CniMetrics;
  let installer: CniInstaller | undefined;

  const options = (more: Partial<CniInstallerOptions> = {}): CniInstallerOptions => ({
    mountedCniNetDir: net,
    mountedCniBinDir: path.join(root, 'bin'),
    cniAgentRunDir: path.join(root, 'run'),
    cniConfName: '',
    chainedCniPlugin: true,
    pluginConfig: PLUGIN,
    orchConfig: () => ({ text: 'apiVersion: v1\n', summary: 'test' }),
    orchConfigMode: 0o600,
    pluginMain: path.join(root, 'plugin-main.js'),
    log: recordingLog(logs),
    metrics,
    checkIntervalMs: 200,
    ...more,
  });
  const start = async (more: Partial<CniInstallerOptions> = {}) => {
    installer = new CniInstaller(options(more));
    await installer.start();
    return installer;
  };

  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-cni-installer-'));
    net = path.join(root, 'net.d');
    fs.mkdirSync(net);
    logs = [];
    metrics = new CniMetrics({ version: 'test' });
  });
  afterEach(async () => {
    await installer?.stop();
    installer = undefined;
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('chains into the highest-priority config only (lexicographic, any of .conf, .conflist, .json)', async () => {
    fs.writeFileSync(path.join(net, '20-b.conf'), fixture('bridge.conf'));
    fs.writeFileSync(path.join(net, '10-a.json'), fixture('bridge.conf'));
    fs.writeFileSync(path.join(net, '05-notes.txt'), 'not a network config');
    const i = await start();
    expect(i.ready).to.equal(true);
    // Runtimes read lists from .conflist files only: the .json becomes one.
    expect(i.configFile).to.equal(path.join(net, '10-a.conflist'));
    expect(fs.readFileSync(path.join(net, '10-a.conflist'), 'utf8')).to.equal(fixture('bridge.conf.golden'));
    expect(fs.existsSync(path.join(net, '10-a.json'))).to.equal(false);
    expect(fs.readFileSync(path.join(net, '20-b.conf'), 'utf8')).to.equal(fixture('bridge.conf'));
  });

  it('waits for the config named by --cni-conf-name, then finds it again after turning it into a list', async () => {
    fs.writeFileSync(path.join(net, '00-first.conflist'), fixture('list.conflist'));
    const i = await start({ cniConfName: 'bridge.conf', cniConfNameSource: '--cni-conf-name' });
    expect(i.ready).to.equal(false);
    expect(logs).to.deep.include({ level: 'info', msg: `waiting for the CNI network config ${path.join(net, 'bridge.conf')} (--cni-conf-name) to appear` });
    fs.writeFileSync(path.join(net, 'bridge.conf'), fixture('bridge.conf'));
    await waitFor('ready', () => i.ready);
    expect(fs.readFileSync(path.join(net, 'bridge.conflist'), 'utf8')).to.equal(fixture('bridge.conf.golden'));
    expect(fs.existsSync(path.join(net, 'bridge.conf'))).to.equal(false);
    expect(fs.readFileSync(path.join(net, '00-first.conflist'), 'utf8')).to.equal(fixture('list.conflist'));
    // A named config the runtime does not use first is allowed, with a warning (once).
    const preempted = logs.filter((l) => l.level === 'warn' && l.msg.includes('sorts before'));
    expect(preempted.map((l) => l.msg)).to.deep.equal([
      `${path.join(net, '00-first.conflist')} sorts before bridge.conflist: the container runtime uses it instead of the mesh plug-in's config`,
    ]);
    // Later checks find bridge.conflist for the name bridge.conf and leave it alone.
    const installs = (await metrics.installsTotal.get()).values[0].value;
    i.check();
    await new Promise((r) => setTimeout(r, 300));
    expect((await metrics.installsTotal.get()).values[0].value).to.equal(installs);
  });

  it('replaces a mesh entry whose settings drifted, keeping a single one', async () => {
    const drifted = JSON.parse(fixture('list.conflist.golden'));
    drifted.plugins[2].plugin_log_level = 'none';
    fs.writeFileSync(path.join(net, 'list.conflist'), JSON.stringify(drifted));
    await start();
    expect(fs.readFileSync(path.join(net, 'list.conflist'), 'utf8')).to.equal(fixture('list.conflist.golden'));
  });

  it('leaves a malformed config byte for byte, says what is wrong, and installs once it is fixed', async () => {
    const file = path.join(net, '10-bad.conflist');
    const broken = '{"name": "x", "plugins": [{"type": "bridge"},]}';
    fs.writeFileSync(file, broken);
    const reasons: string[] = [];
    installer = new CniInstaller(options());
    installer.on('notReady', (reason: string) => reasons.push(reason));
    await installer.start();
    expect(installer.ready).to.equal(false);
    const error = logs.find((l) => l.level === 'error');
    expect(error?.msg).to.equal(`${file}: invalid JSON at line 1 column 46: expected a value, found "]"; left untouched, waiting for it to be fixed`);
    await new Promise((r) => setTimeout(r, 500));
    expect(fs.readFileSync(file, 'utf8')).to.equal(broken);
    expect(logs.filter((l) => l.level === 'error')).to.have.length(1); // reported once, not every check
    expect((await metrics.installReady.get()).values[0].value).to.equal(0);
    fs.writeFileSync(file, fixture('list.conflist'));
    await waitFor('ready', () => installer!.ready);
    expect(pluginTypes(file)).to.deep.equal(['bridge', 'tuning', 'mesh-cni']);
    expect((await metrics.installReady.get()).values[0].value).to.equal(1);
  });

  it('refuses to chain into a list that holds only the mesh plug-in', async () => {
    fs.writeFileSync(path.join(net, 'YY-mesh-cni.conflist'), JSON.stringify({ cniVersion: '0.3.1', name: 'mesh-cni', plugins: [{ type: 'mesh-cni' }] }));
    const i = await start();
    expect(i.ready).to.equal(false);
    expect(logs.map((l) => l.msg)).to.include(`${path.join(net, 'YY-mesh-cni.conflist')} holds only the mesh plug-in (a standalone install?); chaining needs the node's own network config`);
  });

  it('on stop, removes its entry from every config it put one in', async () => {
    fs.writeFileSync(path.join(net, '20-b.conf'), fixture('bridge.conf'));
    const i = await start();
    expect(i.configFile).to.equal(path.join(net, '20-b.conflist'));
    // A config that sorts first appears: the runtime now uses it, so the entry goes there too.
    fs.writeFileSync(path.join(net, '10-a.conflist'), fixture('list.conflist'));
    await waitFor('the new config', () => i.configFile === path.join(net, '10-a.conflist') && i.ready);
    await i.stop();
    expect(pluginTypes(path.join(net, '10-a.conflist'))).to.deep.equal(['bridge', 'tuning']);
    expect(pluginTypes(path.join(net, '20-b.conflist'))).to.deep.equal(['bridge']);
    expect(fs.existsSync(path.join(root, 'bin', 'mesh-cni'))).to.equal(false);
    expect(fs.existsSync(path.join(root, 'run', 'mesh-cni-orchconfig'))).to.equal(false);
    expect(i.ready).to.equal(false);
  });

  it('standalone with a .conf name writes the plugin itself, and warns when another config sorts first', async () => {
    fs.writeFileSync(path.join(net, '10-bridge.conf'), fixture('bridge.conf'));
    const i = await start({ chainedCniPlugin: false, cniConfName: 'ZZ-mesh.conf' });
    expect(i.ready).to.equal(true);
    expect(JSON.parse(fs.readFileSync(path.join(net, 'ZZ-mesh.conf'), 'utf8'))).to.deep.equal(PLUGIN);
    expect(logs).to.deep.include({
      level: 'warn',
      msg: `${path.join(net, '10-bridge.conf')} sorts before ZZ-mesh.conf: the container runtime uses it instead of the mesh plug-in's config`,
    });
    await i.stop();
    expect(fs.existsSync(path.join(net, 'ZZ-mesh.conf'))).to.equal(false);
    expect(fs.readFileSync(path.join(net, '10-bridge.conf'), 'utf8')).to.equal(fixture('bridge.conf'));
  });

  it('does not start, and writes nothing, without an orchestrator config', async () => {
    fs.writeFileSync(path.join(net, 'bridge.conf'), fixture('bridge.conf'));
    installer = new CniInstaller(
      options({
        orchConfig: () => {
          throw new OrchConfigError('ORCHCONFIG: orchestrator config /nope: ENOENT');
        },
      }),
    );
    await installer.start().then(
      () => expect.fail('started'),
      (err) => expect(err.message).to.equal('ORCHCONFIG: orchestrator config /nope: ENOENT'),
    );
    expect(fs.readdirSync(net)).to.deep.equal(['bridge.conf']);
    expect(fs.existsSync(path.join(root, 'bin'))).to.equal(false);
  });

  it('repairs the executable and the orchestrator config when they are removed or changed', async () => {
    fs.writeFileSync(path.join(net, 'bridge.conf'), fixture('bridge.conf'));
    await start();
    const exe = path.join(root, 'bin', 'mesh-cni');
    const orch = path.join(root, 'run', 'mesh-cni-orchconfig');
    const script = fs.readFileSync(exe, 'utf8');
    fs.rmSync(exe);
    fs.writeFileSync(orch, 'tampered');
    fs.chmodSync(orch, 0o644);
    await waitFor('repair', () => fs.existsSync(exe) && fs.readFileSync(orch, 'utf8') === 'apiVersion: v1\n' && (fs.statSync(orch).mode & 0o777) === 0o600);
    expect(fs.readFileSync(exe, 'utf8')).to.equal(script);
    expect(fs.statSync(exe).mode & 0o777).to.equal(0o755);
  });
});

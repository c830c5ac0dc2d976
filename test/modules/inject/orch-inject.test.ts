import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { OrchApiServer, startOrchApiServer } from '../../helpers/orch-api';
import { REPO_ROOT, runCli } from '../../helpers/run-cli';

const FIXTURES = path.join(REPO_ROOT, 'test', 'fixtures', 'inject');
const SETTINGS = [
  '--injectConfigFile',
  path.join(FIXTURES, 'settings', 'inject-config.yaml'),
  '--valuesFile',
  path.join(FIXTURES, 'settings', 'values.json'),
  '--meshConfigFile',
  path.join(FIXTURES, 'settings', 'mesh.yaml'),
];

describe('meshctl orch-inject: input, output and errors', function () {
  this.timeout(60_000);
  let dir: string;
  const write = (name: string, text: string) => {
    const file = path.join(dir, name);
    fs.writeFileSync(file, text);
    return file;
  };
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-orch-inject-'));
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('reads stdin with -f -, passes unknown kinds through as written, writes -o', () => {
    const input = 'apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}   # kept as written\n---\n' + fs.readFileSync(path.join(FIXTURES, 'pod.yaml'), 'utf8');
    const out = path.join(dir, 'out.yaml');
    const r = spawnSync(process.execPath, [path.join(REPO_ROOT, 'bin', 'meshctl'), 'orch-inject', '-f', '-', ...SETTINGS, '-o', out], {
      input,
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '' },
      timeout: 30_000,
    });
    expect(r.status, r.stderr).to.equal(0);
    expect(r.stdout).to.equal('');
    const text = fs.readFileSync(out, 'utf8');
    expect(text.startsWith('apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}   # kept as written\n---\n')).to.equal(true);
    const docs = parseAllDocuments(text).map((d) => d.toJS()).filter(Boolean);
    expect(docs).to.have.length(2);
    expect(docs[1].metadata.annotations['sidecar.mesh.io/status']).to.be.a('string');
    expect(text.endsWith('---\n')).to.equal(true);
  });

  it('says what is missing: no -f, a file that does not exist', async () => {
    const none = await runCli('meshctl', ['orch-inject', ...SETTINGS]);
    expect(none.code).to.equal(1);
    expect(none.stderr).to.match(/filename not specified/);
    const missing = await runCli('meshctl', ['orch-inject', '-f', path.join(dir, 'nope.yaml'), ...SETTINGS]);
    expect(missing.code).to.equal(1);
    expect(missing.stderr).to.match(/nope\.yaml: no such file or directory/);
  });

  it('without config files, names the orchestrator config it could not use', async () => {
    const input = path.join(FIXTURES, 'hello.yaml');
    const r = await runCli('meshctl', ['orch-inject', '-f', input, '--orchconfig', path.join(dir, 'no-orchconfig')]);
    expect(r.code).to.equal(1);
    expect(r.stderr).to.match(/orchestrator config .*no-orchconfig/);
  });

  it('refuses a file over the size limit, unread', async () => {
    const big = write('big.yaml', 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: big\n  annotations:\n    a: "' + 'x'.repeat(4096) + '"\n');
    const r = await runCli('meshctl', ['orch-inject', '-f', big, ...SETTINGS], { env: { PILOT_CONFIG_FILE_MAX_BYTES: '1024' } });
    expect(r.code).to.equal(1);
    expect(r.stderr).to.match(/big\.yaml.*(larger|bytes|limit)/);
  });

  it('stops a YAML alias bomb with a clear error, quickly', async () => {
    const levels = ['a: &a ["x","x","x","x","x","x","x","x","x"]'];
    for (let i = 1; i < 9; i++) levels.push(`${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(9).fill('*' + String.fromCharCode(96 + i)).join(',')}]`);
    const bomb = write('bomb.yaml', 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: bomb\n  annotations: {}\n' + levels.join('\n') + '\nspec: {containers: [{name: c, image: i}]}\n');
    const started = Date.now();
    const r = await runCli('meshctl', ['orch-inject', '-f', bomb, ...SETTINGS], { timeoutMs: 20_000 });
    expect(r.code).to.equal(1);
    expect(r.stderr).to.match(/bomb\.yaml: document 1: .*alias/i);
    expect(Date.now() - started).to.be.below(15_000);
  });

  it('rejects a document that is not a mapping, and bad YAML, naming the document', async () => {
    const scalar = write('scalar.yaml', 'apiVersion: v1\nkind: Service\nmetadata: {name: s}\n---\njust a string\n');
    const r = await runCli('meshctl', ['orch-inject', '-f', scalar, ...SETTINGS]);
    expect(r.code).to.equal(1);
    expect(r.stderr).to.match(/scalar\.yaml: document 2: not a mapping/);
    const broken = write('broken.yaml', 'apiVersion: v1\nkind: Pod\nmetadata: {name: [unclosed\n');
    const b = await runCli('meshctl', ['orch-inject', '-f', broken, ...SETTINGS]);
    expect(b.code).to.equal(1);
    expect(b.stderr).to.match(/broken\.yaml: .*not valid YAML/);
  });

  it('rejects a workload without a pod template, and a bad injection config', async () => {
    const noTemplate = write('notemplate.yaml', 'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {replicas: 1}\n');
    const r = await runCli('meshctl', ['orch-inject', '-f', noTemplate, ...SETTINGS]);
    expect(r.code).to.equal(1);
    expect(r.stderr).to.match(/document 1 \(Deployment d\): spec\.template is required/);
    const badConfig = write('bad-config.yaml', 'templates: [1, 2]\n');
    const c = await runCli('meshctl', ['orch-inject', '-f', path.join(FIXTURES, 'hello.yaml'), ...SETTINGS.slice(2), '--injectConfigFile', badConfig]);
    expect(c.code).to.equal(1);
    expect(c.stderr).to.match(/bad-config\.yaml: templates: must be a mapping/);
  });
});

describe('meshctl orch-inject: settings from the orchestrator\'s config maps', function () {
  this.timeout(60_000);
  let server: OrchApiServer;
  let dir: string;
  let kubeconfig: string;
  before(async () => {
    server = await startOrchApiServer({ simulateCluster: false });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-orch-inject-api-'));
    kubeconfig = server.writeKubeconfigFile(dir);
    const read = (name: string) => fs.readFileSync(path.join(FIXTURES, 'settings', name), 'utf8');
    await server.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'mesh-system' } });
    await server.create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'mesh-sidecar-injector', namespace: 'mesh-system' },
      data: { config: read('inject-config.yaml'), values: read('values.json') },
    });
    await server.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'mesh', namespace: 'mesh-system' }, data: { mesh: read('mesh.yaml') } });
  });
  after(async () => {
    await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('reads the injection config, values and mesh config from the config maps', async () => {
    const r = await runCli('meshctl', ['orch-inject', '-f', path.join(FIXTURES, 'hello.yaml'), '--orchconfig', kubeconfig], { env: { ENABLE_NATIVE_SIDECARS: 'true' } });
    expect(r.code, r.stderr).to.equal(0);
    const files = await runCli('meshctl', ['orch-inject', '-f', path.join(FIXTURES, 'hello.yaml'), ...SETTINGS], { env: { ENABLE_NATIVE_SIDECARS: 'true' } });
    expect(r.stdout).to.equal(files.stdout);
  });

  it('names a config map that is not there', async () => {
    const r = await runCli('meshctl', ['orch-inject', '-f', path.join(FIXTURES, 'hello.yaml'), '--orchconfig', kubeconfig, '--injectConfigMapName', 'nope']);
    expect(r.code).to.equal(1);
    expect(r.stderr).to.match(/config map mesh-system\/nope not found/);
  });
});

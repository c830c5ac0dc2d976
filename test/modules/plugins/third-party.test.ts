import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { REPO_ROOT, runCli } from '../../helpers/run-cli';

/**
 * A user's machine: a folder whose node_modules holds the installed mesh package and the
 * third-party plugin packages beside it (copied from test/fixtures/plugins).
 */
function userProject(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-plugins-'));
  const modules = path.join(dir, 'node_modules');
  fs.mkdirSync(modules);
  fs.symlinkSync(REPO_ROOT, path.join(modules, 'mesh'), 'dir');
  for (const name of fs.readdirSync(path.join(REPO_ROOT, 'test', 'fixtures', 'plugins'))) {
    fs.cpSync(path.join(REPO_ROOT, 'test', 'fixtures', 'plugins', name), path.join(modules, name), { recursive: true });
  }
  return dir;
}

describe('third-party plugins through MESH_PLUGINS', () => {
  let cwd: string;
  before(() => {
    cwd = userProject();
  });

  it('adds the plugin contribution when its setting is on', async () => {
    const env = { MESH_PLUGINS: 'mesh-plugin-hello', MESH_HELLO_PLUGIN: 'true' };
    const r = await runCli('meshctl', ['hello', '--name', 'operator'], { cwd, env });
    expect(r.stderr).to.equal('');
    expect(r.code).to.equal(0);
    expect(r.stdout.trim()).to.equal('hello, operator, from mesh-plugin-hello');
    const list = await runCli('meshctl', ['experimental', 'plugins', '--program', 'meshctl', '-o', 'json'], { cwd, env });
    expect(list.code, list.stderr).to.equal(0);
    expect(JSON.parse(list.stdout)).to.deep.include({
      name: 'hello',
      source: 'mesh-plugin-hello',
      enabled: true,
      reason: 'MESH_HELLO_PLUGIN=true',
      description: 'greets',
    });
  });

  it('leaves it out when its setting is off (the default), and says why', async () => {
    const env = { MESH_PLUGINS: 'mesh-plugin-hello' };
    const r = await runCli('meshctl', ['hello'], { cwd, env });
    expect(r.code).to.equal(1);
    expect(r.stdout).to.equal('');
    expect(r.stderr).to.match(/unknown command "hello" for "meshctl"/);
    const list = await runCli('meshctl', ['experimental', 'plugins', '--program', 'meshctl'], { cwd, env });
    expect(list.stdout).to.match(/hello\s+mesh-plugin-hello\s+off\s+MESH_HELLO_PLUGIN=false \(default\)/);
  });

  it('takes a path as well as a package name', async () => {
    const env = { MESH_PLUGINS: './node_modules/mesh-plugin-hello', MESH_HELLO_PLUGIN: '1' };
    const r = await runCli('meshctl', ['hello'], { cwd, env });
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.include('hello, mesh');
  });

  it('lists the plugin setting in the catalogue', async () => {
    const r = await runCli('meshctl', ['experimental', 'config', 'list', '-o', 'json'], { cwd, env: { MESH_PLUGINS: 'mesh-plugin-hello' } });
    expect(r.code, r.stderr).to.equal(0);
    expect(JSON.parse(r.stdout)).to.deep.include({
      name: 'MESH_HELLO_PLUGIN',
      type: 'B',
      default: 'false',
      meaning: 'adds the `meshctl hello` command',
      programs: ['meshctl'],
    });
  });

  const failures: [string, RegExp][] = [
    ['mesh-plugin-missing', /cannot find plugin module "mesh-plugin-missing"/],
    ['mesh-plugin-broken', /plugin module "mesh-plugin-broken" failed to load: boom: missing native dependency/],
    ['mesh-plugin-empty', /module "mesh-plugin-empty" .*exports no plugin class/],
    ['mesh-plugin-unknown-setting', /plugin "orphan" from "mesh-plugin-unknown-setting": enabledBy names unknown setting "MESH_NO_SUCH_SETTING"/],
  ];
  for (const [spec, message] of failures) {
    it(`stops start-up with a clear error for ${spec}`, async () => {
      const r = await runCli('meshctl', ['version', '--remote=false'], { cwd, env: { MESH_PLUGINS: spec } });
      expect(r.code).to.equal(1);
      expect(r.stdout).to.equal('');
      expect(r.stderr.trim().split('\n')).to.have.length(1);
      expect(r.stderr).to.match(message);
    });
  }

  it('stops the daemon with one line naming the plugin when a part cannot be created', async () => {
    const r = await runCli(
      'pilot-discovery',
      ['discovery', '--configDir', path.join(REPO_ROOT, 'samples', 'config'), '--grpcAddr', '127.0.0.1:0', '--httpAddr', '127.0.0.1:0', '--monitoringAddr', '127.0.0.1:0', '--secureGRPCAddr', '', '--httpsAddr', ''],
      { cwd, env: { MESH_PLUGINS: 'mesh-plugin-throws' } },
    );
    expect(r.code).to.equal(1);
    const errors = r.stderr.split('\n').filter((l) => l.startsWith('Error'));
    expect(errors).to.deep.equal(['Error: plugin "throws" from "mesh-plugin-throws": ThrowingFilter could not be created: MESH_THROWS_TARGET is not set']);
    expect(r.stderr).to.not.contain('asynchronous');
  });
});

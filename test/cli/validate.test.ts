import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { REPO_ROOT, runCli } from '../helpers/run-cli';

describe('meshctl validate', () => {
  let dir: string;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-validate-'));
    fs.mkdirSync(path.join(dir, 'nested'));
    fs.writeFileSync(
      path.join(dir, 'good.yaml'),
      'apiVersion: networking.mesh.io/v1\nkind: WorkloadEntry\nmetadata: { name: a, namespace: foo }\nspec: { address: 127.0.0.5 }\n',
    );
    fs.writeFileSync(
      path.join(dir, 'nested', 'bad.yml'),
      'apiVersion: networking.mesh.io/v1\nkind: WorkloadEntry\nmetadata: { name: b }\nspec:\n  address: 127.0.0.6\n  weight: -1\n',
    );
    fs.writeFileSync(path.join(dir, 'notes.txt'), 'not config');
  });

  it('confirms each valid file and exits 0', async () => {
    const r = await runCli('meshctl', ['validate', '-f', path.join(dir, 'good.yaml')]);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.equal(`"${path.join(dir, 'good.yaml')}" is valid (1 resource)\n`);
  });

  it('walks directories and reports every error with its location, exiting 1', async () => {
    const r = await runCli('meshctl', ['v', '-f', dir]);
    expect(r.code).to.equal(1);
    expect(r.stdout).to.include('good.yaml" is valid');
    expect(r.stderr).to.include(`${path.join(dir, 'nested', 'bad.yml')}:6: document 1 (WorkloadEntry default/b): spec.weight: must not be less than 0`);
    expect(r.stderr).to.match(/Error: 1 problem found/);
  });

  it('reads stdin with -f -', () => {
    const r = spawnSync(process.execPath, [path.join(REPO_ROOT, 'bin', 'meshctl'), 'validate', '-f', '-'], {
      input: 'apiVersion: networking.mesh.io/v1\nkind: ServiceEntry\nmetadata: { name: s }\nspec: { hosts: ["bad host!"] }\n',
      encoding: 'utf8',
    });
    expect(r.status).to.equal(1);
    expect(r.stderr).to.match(/<stdin>:4: document 1 \(ServiceEntry default\/s\): spec\.hosts: .*host name/);
  });

  it('says what is missing: no -f, or a path that does not exist', async () => {
    const none = await runCli('meshctl', ['validate']);
    expect(none.code).to.equal(1);
    expect(none.stderr).to.match(/no input/);
    const missing = await runCli('meshctl', ['validate', '-f', path.join(dir, 'nope.yaml')]);
    expect(missing.code).to.equal(1);
    expect(missing.stderr).to.match(/nope\.yaml: no such file or directory/);
  });
});

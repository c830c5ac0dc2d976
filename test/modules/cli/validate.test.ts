import { expect } from 'chai';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { REPO_ROOT, runCli } from '../../helpers/run-cli';

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

  it('warns about rules no request can reach, and still exits 0', () => {
    const r = spawnSync(process.execPath, [path.join(REPO_ROOT, 'bin', 'meshctl'), 'validate', '-f', '-'], {
      input: [
        'apiVersion: networking.mesh.io/v1',
        'kind: VirtualService',
        'metadata: { name: r, namespace: shop }',
        'spec:',
        '  hosts: [reviews]',
        '  http:',
        '  - route: [{ destination: { host: reviews } }]',
        '  - match: [{ uri: { prefix: /v2 } }]',
        '    route: [{ destination: { host: reviews, subset: v2 } }]',
        '',
      ].join('\n'),
      encoding: 'utf8',
    });
    expect(r.status, r.stderr).to.equal(0);
    expect(r.stdout).to.include('"<stdin>" is valid (1 resource)');
    expect(r.stderr).to.equal('Warning: <stdin>:8: document 1 (VirtualService shop/r): spec.http[1]: rule #1 not used (route without matches defined before)\n');
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

describe('meshctl validate: hostile input (the daemon\'s rules)', function () {
  this.timeout(30_000);
  let dir: string;
  const socket = net.createServer();
  const file = (name: string) => path.join(dir, name);

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-validate-hostile-'));
    fs.writeFileSync(file('good.yaml'), 'apiVersion: networking.mesh.io/v1\nkind: WorkloadEntry\nmetadata: { name: a, namespace: foo }\nspec: { address: 127.0.0.5 }\n');
    const bomb = ['a0: &a0 [x, x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i < 12; i++) bomb.push(`a${i}: &a${i} [${Array(10).fill(`*a${i - 1}`).join(', ')}]`);
    fs.writeFileSync(file('bomb.yaml'), bomb.join('\n'));
    // 50 MB, sparse: reading it would be the mistake.
    fs.closeSync(fs.openSync(file('big.yaml'), 'w'));
    fs.truncateSync(file('big.yaml'), 50 * 1024 * 1024);
    expect(spawnSync('mkfifo', [file('pipe.yaml')]).status).to.equal(0);
    await new Promise<void>((resolve) => socket.listen(file('sock.yaml'), resolve));
    fs.writeFileSync(file('garbage.yaml'), Buffer.concat([crypto.randomBytes(1024 * 1024), Buffer.from([0])]));
    fs.writeFileSync(file('empty.yaml'), '');
    fs.symlinkSync(file('missing.yaml'), file('dangling.yaml'));
    fs.writeFileSync(file('deep.yaml'), `spec: ${'['.repeat(5000)}\n`);
    fs.writeFileSync(file('docs.yaml'), '---\na: 1\n'.repeat(10_001));
  });

  after(() => {
    socket.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('reports each bad file once, naming it, reads no FIFO, and exits 1', async () => {
    const started = Date.now();
    const r = await runCli('meshctl', ['validate', '-f', dir]);
    expect(Date.now() - started).to.be.below(15_000);
    expect(r.code, r.stderr).to.equal(1);
    expect(r.stdout).to.equal(`"${file('empty.yaml')}" is empty: it declares no resources\n"${file('good.yaml')}" is valid (1 resource)\n`);
    const lines = r.stderr.trim().split('\n');
    expect(lines).to.deep.equal([
      `${file('big.yaml')}: the file is 52428800 bytes, more than the limit of 2097152 (PILOT_CONFIG_FILE_MAX_BYTES)`,
      `${file('bomb.yaml')}:5: document 1: YAML aliases expand to more than 100000 values (the limit per file)`,
      `${file('dangling.yaml')}: skipped: a dangling symlink to ${file('missing.yaml')} (the target does not exist)`,
      `${file('deep.yaml')}:1: document 1: nested more than 100 levels deep (the limit)`,
      `${file('docs.yaml')}:20001: more than 10000 YAML documents (the limit per file)`,
      lines[5],
      `${file('pipe.yaml')}: skipped: a FIFO (named pipe), not a regular file`,
      `${file('sock.yaml')}: skipped: a Unix socket, not a regular file`,
      'Error: 8 problems found',
    ]);
    expect(lines[5]).to.match(new RegExp(`^${file('garbage.yaml').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:\\d+: binary content \\(a NUL byte at offset \\d+\\): config files are UTF-8 YAML or JSON text$`));
  });

  it('takes the size limit from PILOT_CONFIG_FILE_MAX_BYTES, for files and stdin, and refuses a nonsensical one', async () => {
    const env = { PILOT_CONFIG_FILE_MAX_BYTES: '100' };
    const small = await runCli('meshctl', ['validate', '-f', file('good.yaml')], { env });
    expect(small.code).to.equal(1);
    expect(small.stderr).to.equal(`${file('good.yaml')}: the file is 121 bytes, more than the limit of 100 (PILOT_CONFIG_FILE_MAX_BYTES)\nError: 1 problem found\n`);
    const stdin = spawnSync(process.execPath, [path.join(REPO_ROOT, 'bin', 'meshctl'), 'validate', '-f', '-'], { input: 'x'.repeat(1000), encoding: 'utf8', env: { PATH: process.env.PATH ?? '', ...env } });
    expect(stdin.status).to.equal(1);
    expect(stdin.stderr).to.equal('<stdin>: the input is more than 100 bytes, the limit (PILOT_CONFIG_FILE_MAX_BYTES)\nError: 1 problem found\n');
    const zero = await runCli('meshctl', ['validate', '-f', file('good.yaml')], { env: { PILOT_CONFIG_FILE_MAX_BYTES: '0' } });
    expect(zero.code).to.equal(1);
    expect(zero.stderr).to.equal('Error: invalid value 0 for setting PILOT_CONFIG_FILE_MAX_BYTES: expected a size in bytes from 1 to 268435456\n');
  });

  it('does not block on a FIFO named on the command line', async () => {
    const r = await runCli('meshctl', ['validate', '-f', file('pipe.yaml')], { timeoutMs: 10_000 });
    expect(r.code).to.equal(1);
    expect(r.stderr).to.equal(`${file('pipe.yaml')}: skipped: a FIFO (named pipe), not a regular file\nError: 1 problem found\n`);
  });
});

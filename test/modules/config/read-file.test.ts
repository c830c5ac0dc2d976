import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { Readable } from 'node:stream';
import { FileRead, listConfigFiles, readConfigFile, readStreamAtMost } from '../../../src/modules/config';
import { DIST_SRC, runNodeUnprivileged } from '../../helpers/unprivileged';

/** Resolves to what readConfigFile gave, failing the test if it took longer than `ms` (it must never block). */
async function readWithin(file: string, maxBytes: number, ms = 2000): Promise<FileRead> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`reading ${file} took more than ${ms} ms`)), ms)));
  try {
    return await Promise.race([readConfigFile(file, maxBytes), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

describe('config: reading a config file (regular files only, bounded)', () => {
  let dir: string;
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-read-'))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('reads a regular file (and one behind a symlink) with a fingerprint of its content', async () => {
    const file = path.join(dir, 'a.yaml');
    fs.writeFileSync(file, 'a: 1\n');
    fs.symlinkSync(file, path.join(dir, 'link.yaml'));
    const read = await readWithin(file, 100);
    const linked = await readWithin(path.join(dir, 'link.yaml'), 100);
    expect(read.kind === 'bytes' && read.bytes.toString()).to.equal('a: 1\n');
    expect(linked).to.deep.equal(read);
    fs.writeFileSync(file, 'a: 2\n');
    const changed = await readWithin(file, 100);
    expect(changed.kind === 'bytes' && changed.fingerprint).to.not.equal(read.kind === 'bytes' && read.fingerprint);
  });

  it('rejects a file over the limit without reading it, naming size, limit and setting', async () => {
    const exact = path.join(dir, 'exact.yaml');
    fs.writeFileSync(exact, 'x'.repeat(100));
    expect((await readWithin(exact, 100)).kind).to.equal('bytes');
    fs.appendFileSync(exact, 'x');
    expect(await readWithin(exact, 100)).to.include({ kind: 'rejected', message: 'the file is 101 bytes, more than the limit of 100 (PILOT_CONFIG_FILE_MAX_BYTES)' });
    // 8 GiB, sparse: reading it would take minutes and all the memory there is.
    const huge = path.join(dir, 'huge.yaml');
    fs.closeSync(fs.openSync(huge, 'w'));
    fs.truncateSync(huge, 8 * 1024 ** 3);
    expect(await readWithin(huge, 2 * 1024 * 1024, 500)).to.include({ kind: 'rejected', message: 'the file is 8589934592 bytes, more than the limit of 2097152 (PILOT_CONFIG_FILE_MAX_BYTES)' });
  });

  it('skips a FIFO without opening it for a writer that never comes', async () => {
    const fifo = path.join(dir, 'pipe.yaml');
    expect(spawnSync('mkfifo', [fifo]).status).to.equal(0);
    const read = await readWithin(fifo, 100, 1000);
    expect(read).to.include({ kind: 'skipped', message: 'a FIFO (named pipe), not a regular file' });
    // Same FIFO, same fingerprint: the caller warns once.
    expect(await readWithin(fifo, 100)).to.deep.equal(read);
  });

  it('skips sockets, devices and directories named like config files', async () => {
    const socket = path.join(dir, 'sock.yaml');
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(socket, resolve));
    try {
      expect(await readWithin(socket, 100)).to.include({ kind: 'skipped', message: 'a Unix socket, not a regular file' });
    } finally {
      server.close();
    }
    fs.symlinkSync('/dev/zero', path.join(dir, 'zero.yaml'));
    expect(await readWithin(path.join(dir, 'zero.yaml'), 100)).to.include({ kind: 'skipped', message: 'a character device, not a regular file' });
    fs.mkdirSync(path.join(dir, 'sub'));
    fs.symlinkSync(path.join(dir, 'sub'), path.join(dir, 'dir.yaml'));
    expect(await readWithin(path.join(dir, 'dir.yaml'), 100)).to.include({ kind: 'skipped', message: 'a directory, not a regular file' });
  });

  it('names the target of a dangling symlink, says so of a loop, and tells a vanished file apart', async () => {
    fs.symlinkSync('missing/target.yaml', path.join(dir, 'dangling.yaml'));
    expect(await readWithin(path.join(dir, 'dangling.yaml'), 100)).to.include({
      kind: 'skipped',
      message: `a dangling symlink to ${path.join(dir, 'missing', 'target.yaml')} (the target does not exist)`,
    });
    fs.symlinkSync(path.join(dir, 'loop-b.yaml'), path.join(dir, 'loop-a.yaml'));
    fs.symlinkSync(path.join(dir, 'loop-a.yaml'), path.join(dir, 'loop-b.yaml'));
    expect(await readWithin(path.join(dir, 'loop-a.yaml'), 100)).to.include({ kind: 'skipped', message: 'a symlink loop, not a regular file' });
    expect(await readWithin(path.join(dir, 'never-there.yaml'), 100)).to.deep.equal({ kind: 'gone' });
  });

  it('reports a file it may not read', () => {
    const read = runNodeUnprivileged(`
      const fs = require('fs'), os = require('os'), path = require('path');
      const { readConfigFile } = require(${JSON.stringify(path.join(DIST_SRC, 'modules', 'config'))});
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-read-'));
      fs.writeFileSync(path.join(dir, 'secret.yaml'), 'a: 1\\n', { mode: 0 });
      readConfigFile(path.join(dir, 'secret.yaml'), 100).then((r) => {
        fs.rmSync(dir, { recursive: true, force: true });
        console.log(JSON.stringify(r));
      });
    `) as FileRead;
    expect(read.kind).to.equal('rejected');
    expect(read.kind === 'rejected' && read.message).to.match(/^cannot read: EACCES: permission denied, open '.*secret\.yaml'$/);
  });

  it('reads a stream (stdin) up to the limit and no further', async () => {
    expect((await readStreamAtMost(Readable.from([Buffer.from('a: 1\n'), Buffer.from('b: 2\n')]), 10)).toString()).to.equal('a: 1\nb: 2\n');
    let pulled = 0;
    const endless = new Readable({
      read() {
        pulled++;
        this.push(Buffer.alloc(1024, 'x'));
      },
    });
    let failure: Error | undefined;
    await readStreamAtMost(endless, 10_000).catch((err: Error) => (failure = err));
    expect(failure?.message).to.equal('the input is more than 10000 bytes, the limit (PILOT_CONFIG_FILE_MAX_BYTES)');
    expect(pulled).to.be.below(20);
  });
});

describe('config: listing a config directory', () => {
  let dir: string;
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-list-'))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('lists *.yaml, *.yml and *.json files, sorted, skipping hidden entries; a file target is itself', async () => {
    for (const f of ['b.yaml', 'a/c.yml', 'a/d.json', 'notes.txt', '.hidden/e.yaml', '.f.yaml']) {
      fs.mkdirSync(path.dirname(path.join(dir, f)), { recursive: true });
      fs.writeFileSync(path.join(dir, f), '');
    }
    expect(await listConfigFiles(dir)).to.deep.equal({ files: ['a/c.yml', 'a/d.json', 'b.yaml'].map((f) => path.join(dir, f)), unreadableDirs: [] });
    expect((await listConfigFiles(path.join(dir, 'notes.txt'))).files).to.deep.equal([path.join(dir, 'notes.txt')]);
    let failure: NodeJS.ErrnoException | undefined;
    await listConfigFiles(path.join(dir, 'nope')).catch((err: NodeJS.ErrnoException) => (failure = err));
    expect(failure?.code).to.equal('ENOENT');
  });

  it('reports a subdirectory it cannot list and goes on with the others', () => {
    const listing = runNodeUnprivileged(`
      const fs = require('fs'), os = require('os'), path = require('path');
      const { listConfigFiles } = require(${JSON.stringify(path.join(DIST_SRC, 'modules', 'config'))});
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-list-'));
      fs.mkdirSync(path.join(dir, 'locked'));
      fs.writeFileSync(path.join(dir, 'locked', 'x.yaml'), '');
      fs.writeFileSync(path.join(dir, 'open.yaml'), '');
      fs.chmodSync(path.join(dir, 'locked'), 0);
      listConfigFiles(dir).then((r) => {
        fs.chmodSync(path.join(dir, 'locked'), 0o700);
        fs.rmSync(dir, { recursive: true, force: true });
        const rel = (p) => path.relative(dir, p);
        console.log(JSON.stringify({ files: r.files.map(rel), unreadable: r.unreadableDirs.map((d) => [rel(d.dir), d.message]) }));
      });
    `) as { files: string[]; unreadable: [string, string][] };
    expect(listing.files).to.deep.equal(['open.yaml']);
    expect(listing.unreadable).to.have.length(1);
    expect(listing.unreadable[0][0]).to.equal('locked');
    expect(listing.unreadable[0][1]).to.match(/^EACCES: permission denied, scandir/);
  });
});

import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ConfigChange, ConfigIssue, DEFAULT_CONFIG_FILE_LIMITS, FileConfigSource, formatIssue, KindRegistry, KINDS, MemoryConfigStore } from '../../../src/modules/config';
import { statSignatures } from '../../../src/modules/config/file-signatures';
import { readConfigFile } from '../../../src/modules/config/read-file';
import { DIST_SRC, runNodeUnprivileged } from '../../helpers/unprivileged';
import { Debouncer } from '../../../src/modules/shared/debouncer';

const kinds = new KindRegistry(KINDS);

function workloadEntry(name: string, address: string, namespace = 'foo'): string {
  return `apiVersion: networking.mesh.io/v1
kind: WorkloadEntry
metadata:
  name: ${name}
  namespace: ${namespace}
spec:
  address: ${address}
  labels: { app: ${name} }
`;
}

function serviceEntry(name: string, port = 8000): string {
  return `apiVersion: networking.mesh.io/v1
kind: ServiceEntry
metadata:
  name: ${name}
  namespace: foo
spec:
  hosts: ["${name}.foo.svc.cluster.local"]
  location: MESH_INTERNAL
  ports:
    - { number: ${port}, name: http, protocol: HTTP, targetPort: 8080 }
  resolution: STATIC
  workloadSelector:
    labels: { app: ${name} }
`;
}

const docs = (...texts: string[]) => texts.join('---\n');

/** Polls until `check` holds (it throws until then), up to `ms`; fails with its last error. */
async function eventually(check: () => void, ms = 3000): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      check();
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 10));
    }
  }
}

interface Harness {
  dir: string;
  store: MemoryConfigStore;
  source: FileConfigSource;
  events: string[][];
  rejected: ConfigIssue[];
  errors: string[];
  warnings: string[];
  infos: string[];
  debugs: string[];
  write(rel: string, text: string | Buffer): void;
  /** `Kind/ns/name` → spec.address or first host, for short assertions. */
  served(): Record<string, string>;
}

describe('config: file source (--configDir)', () => {
  const cleanup: (() => void)[] = [];
  afterEach(() => {
    while (cleanup.length) cleanup.pop()!();
  });

  function harness(extra: Partial<ConstructorParameters<typeof FileConfigSource>[0]> = {}): Harness {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-config-'));
    const store = new MemoryConfigStore();
    const events: string[][] = [];
    const rejected: ConfigIssue[] = [];
    const errors: string[] = [];
    const warnings: string[] = [];
    const infos: string[] = [];
    const debugs: string[] = [];
    store.onChange((changes: readonly ConfigChange[]) => events.push(changes.map((c) => `${c.type} ${c.key}`)));
    const source = new FileConfigSource({
      dir,
      kinds,
      store,
      logger: { debug: (m) => debugs.push(m), info: (m) => infos.push(m), warn: (m) => warnings.push(m), error: (m) => errors.push(m) },
      debounceMs: 20,
      onRejected: (issue) => rejected.push(issue),
      ...extra,
    });
    cleanup.push(() => {
      source.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    });
    return {
      dir,
      store,
      source,
      events,
      rejected,
      errors,
      warnings,
      infos,
      debugs,
      write(rel, text) {
        fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
        fs.writeFileSync(path.join(dir, rel), text);
      },
      served() {
        const out: Record<string, string> = {};
        for (const [kind, list] of store.snapshot()) {
          for (const r of list) {
            const spec = r.spec as { address?: string; hosts?: string[]; ports?: { number: number }[] };
            out[`${kind}/${r.metadata.namespace}/${r.metadata.name}`] = spec.address ?? `${spec.hosts![0]}:${spec.ports![0].number}`;
          }
        }
        return out;
      },
    };
  }

  it('loads nested directories of multi-document YAML and JSON before start resolves', async () => {
    const h = harness();
    h.write('mesh.yaml', docs(serviceEntry('httpbin'), workloadEntry('httpbin-v1', '127.0.0.10')));
    h.write('team/a/workloads.yml', docs(workloadEntry('a1', '10.0.1.1'), workloadEntry('a2', '10.0.1.2', 'bar')));
    h.write('team/b/w.json', JSON.stringify({ apiVersion: 'networking.mesh.io/v1', kind: 'WorkloadEntry', metadata: { name: 'b1', namespace: 'foo' }, spec: { address: '10.0.2.1' } }));
    h.write('README.md', 'not config');
    h.write('.hidden/x.yaml', workloadEntry('hidden', '10.9.9.9'));
    await h.source.start();
    expect(h.served()).to.deep.equal({
      'ServiceEntry/foo/httpbin': 'httpbin.foo.svc.cluster.local:8000',
      'WorkloadEntry/bar/a2': '10.0.1.2',
      'WorkloadEntry/foo/a1': '10.0.1.1',
      'WorkloadEntry/foo/b1': '10.0.2.1',
      'WorkloadEntry/foo/httpbin-v1': '127.0.0.10',
    });
    expect(h.events).to.have.length(1, 'the initial load is one batch');
    expect(h.source.status().map((s) => [path.relative(h.dir, s.file), s.resources, s.lastError])).to.deep.equal([
      ['mesh.yaml', 2, undefined],
      [path.join('team', 'a', 'workloads.yml'), 2, undefined],
      [path.join('team', 'b', 'w.json'), 1, undefined],
    ]);
    expect(h.rejected).to.deep.equal([]);
  });

  it('sees a file added, edited and deleted after the debounce, with exactly the changed keys', async () => {
    const h = harness();
    h.write('a.yaml', docs(workloadEntry('w1', '10.0.0.1'), workloadEntry('w2', '10.0.0.2')));
    await h.source.start();
    h.events.length = 0;

    h.write('sub/new/b.yaml', docs(serviceEntry('svc'), workloadEntry('w3', '10.0.0.3')));
    await eventually(() => expect(h.events).to.deep.equal([['added ServiceEntry/foo/svc', 'added WorkloadEntry/foo/w3']]));

    h.write('a.yaml', docs(workloadEntry('w1', '10.0.0.1'), workloadEntry('w2', '10.0.0.22')));
    await eventually(() => expect(h.events.slice(1)).to.deep.equal([['updated WorkloadEntry/foo/w2']]));
    expect(h.served()['WorkloadEntry/foo/w2']).to.equal('10.0.0.22');

    fs.rmSync(path.join(h.dir, 'sub'), { recursive: true });
    await eventually(() => expect(h.events.slice(2)).to.deep.equal([['deleted ServiceEntry/foo/svc', 'deleted WorkloadEntry/foo/w3']]));
    expect(Object.keys(h.served())).to.deep.equal(['WorkloadEntry/foo/w1', 'WorkloadEntry/foo/w2']);
    expect(h.source.status()).to.have.length(1);
  });

  it('says when it saw a change, so the push debounce does not wait for quiet a second time', async () => {
    const h = harness();
    h.write('a.yaml', workloadEntry('w1', '10.0.0.1'));
    const seen: Array<number | undefined> = [];
    h.store.onChange((changes) => seen.push(...changes.map((c) => c.seenAt)));
    await h.source.start();
    expect(seen).to.deep.equal([undefined], 'the initial load waited for no event');
    seen.length = 0;
    const written = Date.now();
    h.write('a.yaml', workloadEntry('w1', '10.0.0.2'));
    await eventually(() => expect(seen).to.have.length(1));
    const applied = Date.now();
    // The watch event came after the write and at least the source's debounce (20 ms) before it was applied.
    expect(seen[0]).to.be.within(written, applied - 20);
  });

  it('sees the deletion of a file an editor had replaced by renaming another over it', async () => {
    const h = harness();
    h.write('a.yaml', workloadEntry('w1', '10.0.0.1'));
    await h.source.start();
    h.events.length = 0;
    const file = path.join(h.dir, 'a.yaml');
    fs.writeFileSync(`${file}.swp`, workloadEntry('w1', '10.0.0.2'));
    fs.renameSync(`${file}.swp`, file);
    await eventually(() => expect(h.events).to.deep.equal([['updated WorkloadEntry/foo/w1']]));
    fs.rmSync(file);
    await eventually(() => expect(h.events.slice(1)).to.deep.equal([['deleted WorkloadEntry/foo/w1']]));
  });

  it('gives no event for a rewrite with the same content', async () => {
    const h = harness();
    const text = workloadEntry('w1', '10.0.0.1');
    h.write('a.yaml', text);
    await h.source.start();
    h.events.length = 0;
    h.write('a.yaml', text);
    // A later change elsewhere proves the rewrite was seen and produced nothing.
    h.write('b.yaml', workloadEntry('marker', '10.0.0.9'));
    await eventually(() => expect(h.events.flat()).to.include('added WorkloadEntry/foo/marker'));
    expect(h.events.flat()).to.deep.equal(['added WorkloadEntry/foo/marker']);
  });

  it('keeps every resource of a file with a YAML syntax error and reports file and line', async () => {
    const h = harness();
    const good = docs(workloadEntry('w1', '10.0.0.1'), workloadEntry('w2', '10.0.0.2'));
    h.write('a.yaml', good);
    await h.source.start();
    h.events.length = 0;

    // The edit changes w1, but a broken flow mapping in document 2 makes the whole file suspect.
    h.write('a.yaml', docs(workloadEntry('w1', '10.0.0.111'), workloadEntry('w2', '10.0.0.2').replace('  namespace: foo\n', '  namespace: { foo\n')));
    await eventually(() => expect(h.rejected).to.not.be.empty);
    expect(h.served()).to.deep.equal({ 'WorkloadEntry/foo/w1': '10.0.0.1', 'WorkloadEntry/foo/w2': '10.0.0.2' });
    const file = path.join(h.dir, 'a.yaml');
    expect(h.rejected[0].location.file).to.equal(file);
    expect(h.rejected[0].location.line).to.be.a('number');
    expect(h.errors[0]).to.match(new RegExp(`^rejected config: ${file}:\\d+: document 2: invalid YAML`));
    expect(h.errors).to.have.length(h.rejected.length);
    const [status] = h.source.status();
    expect(status.resources).to.equal(2);
    expect(status.lastError).to.contain('invalid YAML');

    // Fixed: applied, and the error is gone.
    h.write('a.yaml', docs(workloadEntry('w1', '10.0.0.111'), workloadEntry('w2', '10.0.0.2')));
    await eventually(() => expect(h.served()['WorkloadEntry/foo/w1']).to.equal('10.0.0.111'));
    expect(h.events).to.deep.equal([['updated WorkloadEntry/foo/w1']]);
    expect(h.source.status()[0].lastError).to.equal(undefined);
  });

  it('rejects one invalid document alone: its last good version stays, the others update', async () => {
    const h = harness();
    h.write('a.yaml', docs(serviceEntry('svc', 8000), workloadEntry('w1', '10.0.0.1'), workloadEntry('w2', '10.0.0.2')));
    await h.source.start();
    h.events.length = 0;

    const badService = serviceEntry('svc', 70000);
    h.write('a.yaml', docs(badService, workloadEntry('w1', '10.0.0.11'), workloadEntry('w2', '10.0.0.22')));
    await eventually(() => expect(h.events).to.have.length(1));
    expect(h.events[0]).to.deep.equal(['updated WorkloadEntry/foo/w1', 'updated WorkloadEntry/foo/w2']);
    expect(h.served()['ServiceEntry/foo/svc']).to.equal('svc.foo.svc.cluster.local:8000');
    expect(h.rejected.map(formatIssue)).to.deep.equal([
      `${path.join(h.dir, 'a.yaml')}:10: document 1 (ServiceEntry foo/svc): spec.ports[0].number: must be a port number from 1 to 65535`,
    ]);
    expect(h.errors[0]).to.match(/keeping the last good version of ServiceEntry\/foo\/svc$/);
    expect(h.source.status()[0].resources).to.equal(3);

    // The same bad content again is neither re-applied nor counted again.
    h.write('a.yaml', docs(badService, workloadEntry('w1', '10.0.0.11'), workloadEntry('w2', '10.0.0.22')));
    h.write('b.yaml', workloadEntry('marker', '10.0.0.9'));
    await eventually(() => expect(h.events).to.have.length(2));
    expect(h.rejected).to.have.length(1);
  });

  it('serves the first file in sorted order when two declare the same resource', async () => {
    const h = harness();
    h.write('b.yaml', workloadEntry('w', '10.0.0.2'));
    h.write('a.yaml', workloadEntry('w', '10.0.0.1'));
    await h.source.start();
    expect(h.served()).to.deep.equal({ 'WorkloadEntry/foo/w': '10.0.0.1' });
    fs.rmSync(path.join(h.dir, 'a.yaml'));
    await eventually(() => expect(h.served()).to.deep.equal({ 'WorkloadEntry/foo/w': '10.0.0.2' }));
  });

  it('polls when asked to', async () => {
    const h = harness({ poll: true, pollMs: 30 });
    await h.source.start();
    h.write('a.yaml', workloadEntry('w', '10.0.0.1'));
    await eventually(() => expect(h.served()).to.deep.equal({ 'WorkloadEntry/foo/w': '10.0.0.1' }));
  });

  it('rejects a file the YAML library throws on (an alias bomb) alone: edits of every file still apply', async () => {
    const h = harness();
    h.write('a.yaml', workloadEntry('w1', '10.0.0.1'));
    h.write('bomb.yaml', `a: &a [x, x]\nb: [${Array(150).fill('*a').join(', ')}]\n`);
    await h.source.start();
    expect(h.served()).to.deep.equal({ 'WorkloadEntry/foo/w1': '10.0.0.1' });
    expect(h.errors).to.deep.equal([`rejected config: ${path.join(h.dir, 'bomb.yaml')}:2: document 1: more than 100 YAML alias references (the limit per file); nothing from this file is served`]);
    h.write('a.yaml', workloadEntry('w1', '10.0.0.2'));
    await eventually(() => expect(h.served()).to.deep.equal({ 'WorkloadEntry/foo/w1': '10.0.0.2' }));
    expect(h.rejected).to.have.length(1);
  });

  it('gives one error for a file of binary garbage, and applies it once fixed', async () => {
    const h = harness();
    h.write('a.yaml', workloadEntry('w1', '10.0.0.1'));
    await h.source.start();
    h.write('a.yaml', Buffer.concat([Buffer.from('kind: '), crypto.randomBytes(1024 * 1024), Buffer.from([0])]));
    await eventually(() => expect(h.rejected).to.have.length(1));
    expect(h.errors).to.have.length(1);
    expect(h.errors[0]).to.match(new RegExp(`^rejected config: ${path.join(h.dir, 'a.yaml')}:\\d+: binary content \\(a NUL byte at offset \\d+\\).*; keeping the file's last good version \\(1 resource\\)$`));
    expect(h.source.status()[0]).to.include({ resources: 1 }).and.to.have.property('lastError').that.match(/binary content/);
    expect(h.served()).to.deep.equal({ 'WorkloadEntry/foo/w1': '10.0.0.1' });
    h.write('a.yaml', workloadEntry('w1', '10.0.0.2'));
    await eventually(() => expect(h.served()).to.deep.equal({ 'WorkloadEntry/foo/w1': '10.0.0.2' }));
    expect(h.source.status()[0].lastError).to.equal(undefined);
  });

  it('logs the first 10 rejected documents of a file and sums up the rest, counting them all', async () => {
    const h = harness();
    h.write('a.yaml', docs(...Array.from({ length: 15 }, (_, i) => workloadEntry(`Bad_${i}`, '10.0.0.1'))));
    await h.source.start();
    expect(h.rejected).to.have.length(15);
    expect(h.errors).to.have.length(11);
    expect(h.errors[10]).to.equal(`rejected config: ${path.join(h.dir, 'a.yaml')}: 5 more rejected document issues not shown (meshctl validate -f lists them all)`);
    expect(h.source.status()[0].lastError!.split('\n')).to.have.length(11);
  });

  it('says so when a file is empty, and that its resources were removed', async () => {
    const h = harness();
    h.write('a.yaml', docs(workloadEntry('w1', '10.0.0.1'), workloadEntry('w2', '10.0.0.2')));
    h.write('b.yaml', '# nothing yet\n');
    await h.source.start();
    expect(h.warnings).to.deep.equal([`config file ${path.join(h.dir, 'b.yaml')} is empty: it declares no resources`]);
    h.write('a.yaml', '');
    await eventually(() => expect(h.served()).to.deep.equal({}));
    expect(h.warnings[1]).to.equal(`config file ${path.join(h.dir, 'a.yaml')} is empty: it declares no resources; its 2 resources were removed`);
    expect(h.rejected).to.deep.equal([]);
  });

  it('skips a FIFO or a dangling symlink put in place of a file, warning once and keeping its last good version', async () => {
    const h = harness();
    const file = path.join(h.dir, 'a.yaml');
    h.write('a.yaml', workloadEntry('w1', '10.0.0.1'));
    await h.source.start();
    expect(spawnSync('mkfifo', [path.join(h.dir, '.fifo')]).status).to.equal(0);
    fs.renameSync(path.join(h.dir, '.fifo'), file);
    await eventually(() => expect(h.warnings).to.have.length(1));
    expect(h.warnings[0]).to.equal(`skipping config file ${file}: a FIFO (named pipe), not a regular file; keeping the file's last good version (1 resource)`);
    // Another event: the FIFO is not reported again.
    h.write('b.yaml', workloadEntry('marker', '10.0.0.9'));
    await eventually(() => expect(h.served()).to.have.property('WorkloadEntry/foo/marker'));
    fs.symlinkSync(path.join(h.dir, 'gone.yaml'), path.join(h.dir, '.link'));
    fs.renameSync(path.join(h.dir, '.link'), file);
    await eventually(() => expect(h.warnings).to.have.length(2));
    expect(h.warnings[1]).to.equal(`skipping config file ${file}: a dangling symlink to ${path.join(h.dir, 'gone.yaml')} (the target does not exist); keeping the file's last good version (1 resource)`);
    expect(h.rejected.map((i) => i.location.file)).to.deep.equal([file, file]);
    expect(h.served()['WorkloadEntry/foo/w1']).to.equal('10.0.0.1');
    h.write('gone.yaml.tmp', workloadEntry('w1', '10.0.0.2'));
    fs.renameSync(path.join(h.dir, 'gone.yaml.tmp'), path.join(h.dir, 'gone.yaml'));
    // The link resolves now: both names declare w1, the first in sorted order (a.yaml) serves it.
    await eventually(() => expect(h.served()['WorkloadEntry/foo/w1']).to.equal('10.0.0.2'));
  });

  it('rejects a file over its size limit unread, naming the setting', async () => {
    const h = harness({ limits: { ...DEFAULT_CONFIG_FILE_LIMITS, maxBytes: 200 } });
    h.write('a.yaml', workloadEntry('w1', '10.0.0.1'));
    await h.source.start();
    h.write('a.yaml', `${workloadEntry('w1', '10.0.0.2')}# ${'x'.repeat(200)}\n`);
    await eventually(() => expect(h.rejected).to.have.length(1));
    expect(h.errors[0]).to.match(/a\.yaml: the file is \d+ bytes, more than the limit of 200 \(PILOT_CONFIG_FILE_MAX_BYTES\); keeping the file's last good version/);
    expect(h.served()['WorkloadEntry/foo/w1']).to.equal('10.0.0.1');
  });

  it('keeps the files of a subdirectory it cannot list, and says so once', () => {
    const result = runNodeUnprivileged(`
      const fs = require('fs'), os = require('os'), path = require('path');
      const { FileConfigSource, KindRegistry, KINDS, MemoryConfigStore } = require(${JSON.stringify(path.join(DIST_SRC, 'modules', 'config'))});
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-config-'));
      const we = (name) => 'apiVersion: networking.mesh.io/v1\\nkind: WorkloadEntry\\nmetadata: {name: ' + name + ', namespace: foo}\\nspec: {address: 10.0.0.1}\\n';
      fs.mkdirSync(path.join(dir, 'team'));
      fs.writeFileSync(path.join(dir, 'team', 'a.yaml'), we('locked'));
      const store = new MemoryConfigStore();
      const warnings = [];
      const source = new FileConfigSource({ dir, kinds: new KindRegistry(KINDS), store, debounceMs: 20, logger: { debug() {}, info() {}, error() {}, warn: (m) => warnings.push(m.replace(dir, '<dir>')) } });
      const names = () => [...store.snapshot().values()].flat().map((r) => r.metadata.name).sort();
      const until = async (check) => { for (let i = 0; i < 300 && !check(); i++) await new Promise((r) => setTimeout(r, 10)); };
      (async () => {
        await source.start();
        fs.chmodSync(path.join(dir, 'team'), 0);
        fs.writeFileSync(path.join(dir, 'b.yaml'), we('open'));
        await until(() => names().includes('open'));
        fs.writeFileSync(path.join(dir, 'c.yaml'), we('another'));
        await until(() => names().includes('another'));
        source.stop();
        fs.chmodSync(path.join(dir, 'team'), 0o700);
        fs.rmSync(dir, { recursive: true, force: true });
        console.log(JSON.stringify({ names: names(), warnings }));
      })();
    `) as { names: string[]; warnings: string[] };
    expect(result.names).to.deep.equal(['another', 'locked', 'open']);
    expect(result.warnings).to.have.length(1);
    expect(result.warnings[0]).to.match(/^cannot list config directory <dir>\/team \(EACCES: permission denied, scandir .*\); its files keep their last good versions$/);
  });

  it('reads on a resync only the files written since their last read (a stat each for the rest), also right after a start on fresh files', async () => {
    const reads: string[] = [];
    const h = harness({ racyMarginMs: 200, readFile: (file, max) => (reads.push(path.basename(file)), readConfigFile(file, max)) });
    for (let i = 0; i < 50; i++) h.write(`w/w${i}.yaml`, workloadEntry(`w${i}`, `10.0.0.${i}`));
    await h.source.start();
    expect(reads).to.have.length(50);
    // Written moments before they were read: once the margin has passed, one quiet resync reads them again to trust them.
    await eventually(() => expect(reads).to.have.length(100), 2000);
    reads.length = 0;

    h.write('w/w7.yaml', workloadEntry('w7', '10.9.9.7'));
    await eventually(() => expect(h.served()['WorkloadEntry/foo/w7']).to.equal('10.9.9.7'));
    expect(reads).to.deep.equal(['w7.yaml']);
    // Touched, not changed: read while its change is recent, then, once older than the margin, not again.
    fs.utimesSync(path.join(h.dir, 'w/w8.yaml'), new Date(), new Date());
    reads.length = 0;
    await h.source.resync();
    expect(reads).to.include('w8.yaml');
    await new Promise((r) => setTimeout(r, 300));
    await h.source.resync();
    reads.length = 0;
    await h.source.resync();
    expect(reads).to.not.include('w8.yaml');
  });

  it('looks only at the file a watch event names, editors\' hidden temporary files aside, and lists the whole directory once it settles', async () => {
    const reads: string[] = [];
    const h = harness({ racyMarginMs: 200, readFile: (file, max) => (reads.push(path.basename(file)), readConfigFile(file, max)) });
    for (let i = 0; i < 20; i++) h.write(`w/w${i}.yaml`, workloadEntry(`w${i}`, `10.0.0.${i}`));
    await h.source.start();
    await eventually(() => expect(reads).to.have.length(40), 2000);
    await new Promise((r) => setTimeout(r, 100));
    reads.length = 0;
    h.debugs.length = 0;
    h.events.length = 0;

    // As editors (and the bench) write: a hidden temporary file renamed over the original.
    const file = path.join(h.dir, 'w', 'w7.yaml');
    fs.writeFileSync(path.join(h.dir, 'w', '.w7.yaml.tmp'), workloadEntry('w7', '10.9.9.7'));
    fs.renameSync(path.join(h.dir, 'w', '.w7.yaml.tmp'), file);
    await eventually(() => expect(h.events).to.deep.equal([['updated WorkloadEntry/foo/w7']]));
    expect(h.debugs.filter((m) => m.startsWith('config resync'))).to.deep.equal(['config resync: looking at 1 named file(s)']);
    expect(reads).to.deep.equal(['w7.yaml']);
    // Once the file is older than the margin, one listing reads it again to trust its stat (and would catch a lost event).
    await eventually(() => expect(h.debugs.filter((m) => m.startsWith('config resync'))).to.deep.equal(['config resync: looking at 1 named file(s)', 'config resync: listed 20 files']), 2000);

    // A named file that went is removed without listing.
    h.debugs.length = 0;
    fs.rmSync(path.join(h.dir, 'w', 'w3.yaml'));
    await eventually(() => expect(h.events.slice(1)).to.deep.equal([['deleted WorkloadEntry/foo/w3']]));
    expect(h.debugs.filter((m) => m.startsWith('config resync'))[0]).to.equal('config resync: looking at 1 named file(s)');
  });

  it('lists the whole directory for a volume mount\'s ..data swap, and takes the new files behind it', async () => {
    const h = harness();
    // What an orchestrator ConfigMap volume looks like: a.yaml -> ..data/a.yaml, ..data -> ..v1.
    h.write('..v1/a.yaml', workloadEntry('w1', '10.0.0.1'));
    fs.symlinkSync('..v1', path.join(h.dir, '..data'));
    fs.symlinkSync(path.join('..data', 'a.yaml'), path.join(h.dir, 'a.yaml'));
    await h.source.start();
    expect(h.served()).to.deep.equal({ 'WorkloadEntry/foo/w1': '10.0.0.1' });
    h.events.length = 0;
    h.debugs.length = 0;
    // The update: a new version directory, a new link renamed over ..data, the old version removed. a.yaml itself is not touched.
    h.write('..v2/a.yaml', workloadEntry('w1', '10.0.0.2'));
    fs.symlinkSync('..v2', path.join(h.dir, '..data_tmp'));
    fs.renameSync(path.join(h.dir, '..data_tmp'), path.join(h.dir, '..data'));
    fs.rmSync(path.join(h.dir, '..v1'), { recursive: true });
    await eventually(() => expect(h.served()).to.deep.equal({ 'WorkloadEntry/foo/w1': '10.0.0.2' }));
    expect(h.debugs.filter((m) => m.startsWith('config resync'))[0]).to.equal('config resync: listed 1 files');
  });

  it('keeps serving every resource when the directory itself is removed, and loads it again once it is back', async () => {
    const h = harness({ pollMs: 50 });
    h.write('a.yaml', workloadEntry('w1', '10.0.0.1'));
    h.write('b.yaml', workloadEntry('w2', '10.0.0.2'));
    await h.source.start();
    h.events.length = 0;
    // Each file's removal is an event naming it: that must not read as the files going one by one.
    fs.rmSync(h.dir, { recursive: true });
    await eventually(() => expect(h.errors.join('\n')).to.match(/config directory .* disappeared; keeping the last loaded config until it is back/));
    await new Promise((r) => setTimeout(r, 200));
    expect(h.events).to.deep.equal([]);
    expect(h.served()).to.deep.equal({ 'WorkloadEntry/foo/w1': '10.0.0.1', 'WorkloadEntry/foo/w2': '10.0.0.2' });
    h.write('a.yaml', workloadEntry('w1', '10.0.0.11'));
    await eventually(() => expect(h.served()).to.deep.equal({ 'WorkloadEntry/foo/w1': '10.0.0.11' }));
    expect(h.infos.join('\n')).to.match(/config directory .* is back/);
  });

  it('does not trust the stat of a file changed within the margin before it (two writes in one clock tick look alike)', async () => {
    const h = harness();
    h.write('fresh.yaml', workloadEntry('fresh', '10.0.0.1'));
    const file = path.join(h.dir, 'fresh.yaml');
    const [fresh] = (await statSignatures([file])).values();
    expect(fresh.trusted, 'written just now').to.equal(false);
    const [aged] = (await statSignatures([file], -60_000)).values();
    expect(aged.trusted, 'as if the margin had passed').to.equal(true);
    expect(aged.value).to.equal(fresh.value);
    // Any write, chmod or swap shows in the signature.
    fs.chmodSync(file, 0o600);
    const [chmodded] = (await statSignatures([file], -60_000)).values();
    expect(chmodded.value).to.not.equal(fresh.value);
    expect((await statSignatures([path.join(h.dir, 'missing.yaml')])).size).to.equal(0);
  });

  it('rejects start for a directory that does not exist, naming it', async () => {
    const dir = path.join(os.tmpdir(), `mesh-config-missing-${process.pid}`);
    const source = new FileConfigSource({ dir, kinds, store: new MemoryConfigStore(), logger: { debug() {}, info() {}, warn() {}, error() {} } });
    let failure: Error | undefined;
    await source.start().catch((err: Error) => (failure = err));
    expect(failure?.message).to.equal(`config directory ${dir} does not exist`);
  });
});

describe('config: debouncer', () => {
  it('waits for quiet, but no longer than its cap', async () => {
    const calls: number[] = [];
    const start = Date.now();
    const d = new Debouncer<true>(40, 150, () => true, () => calls.push(Date.now() - start));
    // Events every 10 ms for 300 ms: never quiet, so only the cap lets applies through.
    const ticker = setInterval(() => d.add(true), 10);
    await new Promise((r) => setTimeout(r, 300));
    clearInterval(ticker);
    await eventually(() => expect(calls.length).to.be.greaterThan(1));
    d.stop();
    expect(calls[0]).to.be.within(140, 400);
  });

  it('counts the quiet period from when an event happened, the cap from when it arrived', async () => {
    const fired: Array<{ at: number; first: number; last: number }> = [];
    const d = new Debouncer<true>(200, 5000, () => true, (_, first, last) => fired.push({ at: Date.now(), first, last }));
    const arrived = Date.now();
    // Seen 150 ms ago by a source that already waited for its own quiet: 50 ms of quiet remain.
    d.add(true, false, arrived - 150);
    await eventually(() => expect(fired).to.have.length(1));
    expect(fired[0].at - arrived).to.be.within(40, 150);
    expect(fired[0].first).to.be.within(arrived, arrived + 5, 'pilot_debounce_time counts from arrival');
    expect(fired[0].last).to.equal(arrived - 150);
    // Seen long ago: the quiet period is over, it fires at once; a later event wins over an older one.
    d.add(true, false, arrived - 10_000);
    d.add(true, false, arrived - 5_000);
    await eventually(() => expect(fired).to.have.length(2));
    expect(fired[1].last).to.equal(arrived - 5_000);
    // A time in the future counts as now.
    const before = Date.now();
    d.add(true, false, before + 60_000);
    await eventually(() => expect(fired).to.have.length(3));
    expect(fired[2].at - before).to.be.at.least(190);
    d.stop();
  });

  it('gives one call for a burst', async () => {
    let calls = 0;
    const d = new Debouncer<true>(30, 1000, () => true, () => calls++);
    for (let i = 0; i < 5; i++) d.add(true);
    await eventually(() => expect(calls).to.equal(1));
    await new Promise((r) => setTimeout(r, 60));
    expect(calls).to.equal(1);
  });
});

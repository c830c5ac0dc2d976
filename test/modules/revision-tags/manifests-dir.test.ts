/**
 * `tag generate -d <dir>` reads rendered manifests: hostile files (alias bombs, malformed YAML,
 * wrong types) give one line naming the file or object, never a crash or a hang.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { expect } from 'chai';
import { readManifestsDir } from '../../../src/modules/revision-tags';
import { runCli } from '../../helpers/run-cli';

const BOMB = ['a: &a ["x","x","x","x","x","x","x","x","x"]', ...'bcdefg'.split('').map((k, i) => `${k}: &${k} [${Array(9).fill(`*${'abcdef'[i]}`).join(',')}]`)].join('\n');

describe('revision tags: rendered manifests for tag generate -d', () => {
  let dir: string;
  const write = (name: string, text: string) => {
    const d = fs.mkdtempSync(path.join(dir, 'case-'));
    fs.writeFileSync(path.join(d, name), text);
    return d;
  };
  before(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-tag-manifests-'))));
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('reads every YAML document of the directory tree, skipping other files', () => {
    const d = write('a.yaml', 'kind: A\n---\nkind: B\n');
    fs.mkdirSync(path.join(d, 'sub'));
    fs.writeFileSync(path.join(d, 'sub', 'c.yml'), 'kind: C\n');
    fs.writeFileSync(path.join(d, 'notes.txt'), 'kind: D\n');
    expect(readManifestsDir(d)).to.deep.equal([{ kind: 'A' }, { kind: 'B' }, { kind: 'C' }]);
  });

  it('an alias bomb, malformed YAML and a missing directory are one clear error', () => {
    const bomb = write('bomb.yaml', BOMB);
    expect(() => readManifestsDir(bomb)).to.throw(/bomb\.yaml: Excessive alias count/);
    const bad = write('bad.yaml', 'kind: [unclosed\n  - x: :\n');
    expect(() => readManifestsDir(bad)).to.throw(/bad\.yaml: .*line 1/);
    expect(() => readManifestsDir(path.join(dir, 'nope'))).to.throw('--manifests');
  });

  it('through the command, a webhook configuration of the wrong shape is named', async () => {
    const d = write('wrong.yaml', 'kind: MutatingWebhookConfiguration\nmetadata: {name: w, labels: {mesh.io/rev: canary}}\nwebhooks: "no"\n');
    const r = await runCli('meshctl', ['tag', 'generate', 'x', '-r', 'canary', '-d', d]);
    expect([r.code, r.stderr]).to.deep.equal([1, 'Error: MutatingWebhookConfiguration w: no webhook with a clientConfig to copy (webhooks[0])\n']);
  });
});

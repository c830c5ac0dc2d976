/**
 * `meshctl tag generate|set|list|remove` against the in-process API server, checked with the
 * real kubectl: revision tags as mutating webhook configurations, usage rule 2 (no overwrite
 * without --overwrite), the `default` tag's cluster-wide injection and validation.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { expect } from 'chai';
import { parseAllDocuments } from 'yaml';
import { kubectl, OrchWorld, startOrchWorld } from '../../helpers/orch-mesh';
import { REPO_ROOT, runCli } from '../../helpers/run-cli';

const FIXTURES = path.join(REPO_ROOT, 'test', 'fixtures', 'revision-tags');

interface Webhook {
  name: string;
  clientConfig: { service?: { name: string } };
  namespaceSelector?: { matchExpressions?: { key: string; operator: string; values?: string[] }[]; matchLabels?: Record<string, string> };
  objectSelector?: { matchExpressions?: { key: string; operator: string; values?: string[] }[]; matchLabels?: Record<string, string> };
}
interface Config {
  metadata: { name: string; labels?: Record<string, string> };
  webhooks: Webhook[];
}

describe('meshctl tag against the orchestrator', function () {
  this.timeout(60_000);
  let world: OrchWorld;
  const meshctl = (...args: string[]) => runCli('meshctl', [...args, '--orchconfig', world.kubeconfig], { timeoutMs: 20_000 });
  const getJson = async <T>(...args: string[]): Promise<T> => {
    const r = await kubectl(world.kubeconfig, ['get', ...args, '-o', 'json']);
    expect(r.code, r.stderr).to.equal(0);
    return JSON.parse(r.stdout) as T;
  };
  const tagWebhook = (tag: string) => getJson<Config>('mutatingwebhookconfiguration', `mesh-revision-tag-${tag}`);

  before(async () => {
    world = await startOrchWorld({ namespaces: ['foo', 'bar'], simulateCluster: false });
    await world.apply(fs.readFileSync(path.join(FIXTURES, 'canary.yaml'), 'utf8'));
    await world.apply(fs.readFileSync(path.join(FIXTURES, 'stable.yaml'), 'utf8'));
    // The non-revisioned injector of a default install, which the default tag deactivates.
    await world.apply(fs.readFileSync(path.join(REPO_ROOT, 'test', 'fixtures', 'check-inject', 'default-injector.yaml'), 'utf8'));
  });
  after(async () => world?.close());

  it('tag set prod --revision canary creates the tag webhook calling the revision injector for mesh.io/rev=prod', async () => {
    const r = await meshctl('tag', 'set', 'prod', '--revision', 'canary');
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.contain('Revision tag "prod" created, referencing control plane revision "canary"');
    expect(r.stdout).to.contain('mesh.io/rev=prod');
    const wh = await tagWebhook('prod');
    expect(wh.metadata.labels).to.include({ 'mesh.io/tag': 'prod', 'mesh.io/rev': 'canary' });
    expect(wh.webhooks.map((w) => w.name)).to.deep.equal(['rev.namespace.sidecar-injector.mesh.io', 'rev.object.sidecar-injector.mesh.io']);
    expect(wh.webhooks.every((w) => w.clientConfig.service?.name === 'meshd-canary')).to.equal(true);
    expect(wh.webhooks[0].namespaceSelector?.matchExpressions).to.deep.include({ key: 'mesh.io/rev', operator: 'In', values: ['prod'] });
    expect(wh.webhooks[1].objectSelector?.matchExpressions).to.deep.include({ key: 'mesh.io/rev', operator: 'In', values: ['prod'] });
  });

  it('tag list shows the tag, its revision and the namespaces labelled with it, as a table, JSON and YAML', async () => {
    expect((await kubectl(world.kubeconfig, ['label', 'namespace', 'foo', 'mesh.io/rev=prod'])).code).to.equal(0);
    const table = await meshctl('tag', 'list');
    expect(table.code, table.stderr).to.equal(0);
    const lines = table.stdout.trimEnd().split('\n');
    expect(lines[0].split(/\s+/)).to.deep.equal(['TAG', 'REVISION', 'NAMESPACES']);
    expect(lines.slice(1).map((l) => l.split(/\s+/))).to.deep.equal([['prod', 'canary', 'foo']]);
    const json = await meshctl('tag', 'show', '-o', 'json');
    expect(JSON.parse(json.stdout)).to.deep.equal([{ tag: 'prod', revision: 'canary', namespaces: ['foo'] }]);
    const yaml = await meshctl('tag', 'list', '-o', 'yaml');
    expect(parseAllDocuments(yaml.stdout)[0].toJS()).to.deep.equal([{ tag: 'prod', revision: 'canary', namespaces: ['foo'] }]);
  });

  it('a second tag set prod to another revision without --overwrite fails naming the tag, and changes nothing', async () => {
    const r = await meshctl('tag', 'set', 'prod', '--revision', 'stable');
    expect(r.code).to.not.equal(0);
    expect(r.stderr).to.contain('revision tag "prod" already exists').and.contain('--overwrite');
    expect((await tagWebhook('prod')).metadata.labels?.['mesh.io/rev']).to.equal('canary');
  });

  it('tag generate checks as tag set does: no moving the tag without --overwrite; a warning for its namespaces unless -y', async () => {
    const refused = await meshctl('tag', 'generate', 'prod', '--revision', 'stable');
    expect(refused.code).to.not.equal(0);
    expect(refused.stderr).to.contain('revision tag "prod" already exists');
    const warned = await meshctl('tag', 'generate', 'prod', '--revision', 'stable', '--overwrite');
    expect(warned.code, warned.stderr).to.equal(0);
    expect(warned.stderr).to.contain('found 1 namespace(s) using tag "prod": foo');
    expect((parseAllDocuments(warned.stdout)[0].toJS() as Config).metadata.labels?.['mesh.io/rev']).to.equal('stable');
    const quiet = await meshctl('tag', 'generate', 'prod', '--revision', 'stable', '--overwrite', '-y');
    expect(quiet.stderr).to.equal('');
    expect((await tagWebhook('prod')).metadata.labels?.['mesh.io/rev']).to.equal('canary');
  });

  it('--overwrite asks when namespaces use the tag (no answer aborts); -y skips the question', async () => {
    const asked = await meshctl('tag', 'set', 'prod', '--revision', 'stable', '--overwrite');
    expect(asked.code, asked.stderr).to.equal(0);
    expect(asked.stdout).to.contain('found 1 namespace(s) using tag "prod": foo').and.contain('Aborting operation.');
    expect((await tagWebhook('prod')).metadata.labels?.['mesh.io/rev']).to.equal('canary');
    const done = await meshctl('tag', 'set', 'prod', '--revision', 'stable', '--overwrite', '-y');
    expect(done.code, done.stderr).to.equal(0);
    const wh = await tagWebhook('prod');
    expect(wh.metadata.labels?.['mesh.io/rev']).to.equal('stable');
    expect(wh.webhooks[0].clientConfig.service?.name).to.equal('meshd-stable');
  });

  it('tag generate prints the YAML and changes nothing; the default tag adds the mesh-injection=enabled selectors and the default validator', async () => {
    const r = await meshctl('tag', 'generate', 'default', '--revision', 'canary');
    expect(r.code, r.stderr).to.equal(0);
    const docs = parseAllDocuments(r.stdout).map((d) => d.toJS() as Config & { kind: string });
    expect(docs.map((d) => `${d.kind} ${d.metadata.name}`)).to.deep.equal(['MutatingWebhookConfiguration mesh-revision-tag-default', 'ValidatingWebhookConfiguration mesh-default-validator']);
    const ns = docs[0].webhooks.find((w) => w.name === 'namespace.sidecar-injector.mesh.io');
    expect(ns?.namespaceSelector?.matchExpressions).to.deep.equal([{ key: 'mesh-injection', operator: 'In', values: ['enabled'] }]);
    expect(docs[1].webhooks[0].clientConfig.service?.name).to.equal('meshd-canary');
    const after = await kubectl(world.kubeconfig, ['get', 'mutatingwebhookconfiguration', 'mesh-revision-tag-default']);
    expect(after.code).to.not.equal(0);
  });

  it('tag set default applies the tag webhook and the default validator; --webhook-name names the configuration', async () => {
    const r = await meshctl('tag', 'set', 'default', '-r', 'canary', '--webhook-name', 'mesh-default-injector', '--auto-inject-namespaces');
    expect(r.code, r.stderr).to.equal(0);
    const wh = await getJson<Config>('mutatingwebhookconfiguration', 'mesh-default-injector');
    expect(wh.metadata.labels).to.include({ 'mesh.io/tag': 'default', 'mesh.io/rev': 'canary' });
    const ns = wh.webhooks.find((w) => w.name === 'namespace.sidecar-injector.mesh.io');
    expect(ns?.namespaceSelector?.matchExpressions).to.deep.include({ key: 'mesh-injection', operator: 'NotIn', values: ['disabled'] });
    const validator = await getJson<Config>('validatingwebhookconfiguration', 'mesh-default-validator');
    expect(validator.metadata.labels).to.include({ 'mesh.io/tag': 'default', 'mesh.io/rev': 'canary' });
    expect((await meshctl('tag', 'list', '-o', 'json')).stdout).to.contain('"tag": "default"');
    const old = await getJson<Config>('mutatingwebhookconfiguration', 'mesh-sidecar-injector');
    expect(old.webhooks.map((w) => [w.namespaceSelector?.matchLabels, w.objectSelector?.matchLabels])).to.deep.equal(old.webhooks.map(() => [{ 'mesh.io/deactivated': 'never-match' }, { 'mesh.io/deactivated': 'never-match' }]));
  });

  it('refuses what makes no sense: an unknown revision, a bad tag name, a tag named as a revision, --auto-inject-namespaces on another tag', async () => {
    // Each is refused without changing the cluster, so they run at once.
    const [unknown, bad, clash, auto, noRev] = await Promise.all([
      meshctl('tag', 'set', 'qa', '--revision', 'nope'),
      meshctl('tag', 'set', 'Bad_Tag', '--revision', 'canary'),
      meshctl('tag', 'set', 'stable', '--revision', 'canary'),
      meshctl('tag', 'generate', 'qa', '-r', 'canary', '--auto-inject-namespaces'),
      meshctl('tag', 'set', 'qa'),
    ]);
    expect(unknown.code).to.not.equal(0);
    expect(unknown.stderr).to.contain('cannot find MutatingWebhookConfiguration with revision "nope"');
    expect(bad.code).to.not.equal(0);
    expect(bad.stderr).to.contain('invalid revision tag "Bad_Tag"');
    expect(clash.code).to.not.equal(0);
    expect(clash.stderr).to.contain('a control plane revision of that name exists');
    expect(auto.code).to.not.equal(0);
    expect(auto.stderr).to.contain('--auto-inject-namespaces applies to the default tag only');
    expect(noRev.code).to.not.equal(0);
    expect(noRev.stderr).to.contain('--revision');
  });

  it('tag generate -d takes the revision webhooks from rendered manifests, without a cluster', async () => {
    const r = await runCli('meshctl', ['tag', 'generate', 'qa', '-r', 'stable', '-d', FIXTURES, '--orchconfig', '/nonexistent/config']);
    expect(r.code, r.stderr).to.equal(0);
    const doc = parseAllDocuments(r.stdout)[0].toJS() as Config;
    expect(doc.metadata.labels).to.include({ 'mesh.io/tag': 'qa', 'mesh.io/rev': 'stable' });
    const missing = await runCli('meshctl', ['tag', 'generate', 'qa', '-r', 'stable', '-d', path.join(FIXTURES, 'none')]);
    expect(missing.code).to.not.equal(0);
    expect(missing.stderr).to.contain('no such directory');
  });

  it('tag remove asks while namespaces use the tag; -y removes it and tag list no longer shows it', async () => {
    const asked = await meshctl('tag', 'remove', 'prod');
    expect(asked.code, asked.stderr).to.equal(0);
    expect(asked.stdout).to.contain('still injected by tag "prod": foo').and.contain('Aborting operation.');
    expect((await kubectl(world.kubeconfig, ['get', 'mutatingwebhookconfiguration', 'mesh-revision-tag-prod'])).code).to.equal(0);
    const removed = await meshctl('tag', 'delete', 'prod', '-y');
    expect(removed.code, removed.stderr).to.equal(0);
    expect(removed.stdout).to.contain('Revision tag prod removed');
    expect((await kubectl(world.kubeconfig, ['get', 'mutatingwebhookconfiguration', 'mesh-revision-tag-prod'])).code).to.not.equal(0);
    const list = await meshctl('tag', 'list', '-o', 'json');
    expect(JSON.parse(list.stdout).map((t: { tag: string }) => t.tag)).to.deep.equal(['default']);
    const again = await meshctl('tag', 'remove', 'prod', '-y');
    expect(again.code).to.not.equal(0);
    expect(again.stderr).to.contain('cannot remove tag "prod"');
    // The default tag goes with its validator; no namespace uses it, so no question.
    const def = await meshctl('tag', 'remove', 'default');
    expect(def.code, def.stderr).to.equal(0);
    expect((await kubectl(world.kubeconfig, ['get', 'validatingwebhookconfiguration', 'mesh-default-validator'])).code).to.not.equal(0);
    expect((await meshctl('tag', 'list')).stdout).to.equal('No mesh revision tag MutatingWebhookConfigurations to list\n');
  });
});

/**
 * `x check-inject` verdicts: the reference's cases (a default, a revision 1-16 and a
 * deactivated injector; namespace and pod injection labels in every combination), judged by
 * the mesh webhook configurations read from the API server.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { expect } from 'chai';
import { parse } from 'yaml';
import { InjectionChecker, parseLabelPairs, webhookTable } from '../../../src/modules/diagnose';
import { OrchClient } from '../../../src/modules/orch';
import { OrchApiServer, startOrchApiServer } from '../../helpers/orch-api';
import { REPO_ROOT, runCli } from '../../helpers/run-cli';
import { orchClient } from './support';

const FIXTURES = path.join(REPO_ROOT, 'test', 'fixtures', 'check-inject');
const DEFAULT_NO_MATCH = 'No matching namespace labels (mesh.io/rev=default, mesh-injection=enabled) or pod labels (mesh.io/rev=default, sidecar.mesh.io/inject=true)';
const REV_NO_MATCH = 'No matching namespace labels (mesh.io/rev=1-16) or pod labels (mesh.io/rev=1-16)';
const DEACTIVATED = 'The injection webhook is deactivated, and will never match labels.';

interface Case {
  name: string;
  /** mesh-injection and mesh.io/rev of the namespace; sidecar.mesh.io/inject and mesh.io/rev of the pod. */
  ns: [string, string];
  pod: [string, string];
  /** [injected, reason] of the default, the 1-16 and the deactivated injector. */
  expected: [boolean, string][];
}

const CASES: Case[] = [
  { name: 'no labels', ns: ['', ''], pod: ['', ''], expected: [[false, DEFAULT_NO_MATCH], [false, REV_NO_MATCH], [false, DEACTIVATED]] },
  { name: 'namespace enabled', ns: ['enabled', ''], pod: ['', ''], expected: [[true, 'Namespace label mesh-injection=enabled matches'], [false, REV_NO_MATCH], [false, DEACTIVATED]] },
  { name: 'namespace revision', ns: ['', '1-16'], pod: ['', ''], expected: [[false, DEFAULT_NO_MATCH], [true, 'Namespace label mesh.io/rev=1-16 matches'], [false, DEACTIVATED]] },
  { name: 'pod revision', ns: ['', ''], pod: ['', '1-16'], expected: [[false, 'Pod has mesh.io/rev=1-16 label, preventing injection'], [true, 'Pod label mesh.io/rev=1-16 matches'], [false, DEACTIVATED]] },
  { name: 'pod inject=true', ns: ['', ''], pod: ['true', ''], expected: [[true, 'Pod label sidecar.mesh.io/inject=true matches'], [false, REV_NO_MATCH], [false, DEACTIVATED]] },
  { name: 'both default labels', ns: ['enabled', ''], pod: ['true', ''], expected: [[true, 'Namespace label mesh-injection=enabled matches, and pod label sidecar.mesh.io/inject=true matches'], [false, REV_NO_MATCH], [false, DEACTIVATED]] },
  { name: 'both revision labels', ns: ['', '1-16'], pod: ['', '1-16'], expected: [[false, DEFAULT_NO_MATCH], [true, 'Namespace label mesh.io/rev=1-16 matches'], [false, DEACTIVATED]] },
  { name: 'namespace disabled, pod revision', ns: ['disabled', ''], pod: ['', '1-16'], expected: [[false, 'Namespace has mesh-injection=disabled label, preventing injection'], [false, 'Namespace has mesh-injection=disabled label, preventing injection'], [false, DEACTIVATED]] },
  { name: 'namespace enabled, pod revision', ns: ['enabled', ''], pod: ['', '1-16'], expected: [[true, 'Namespace label mesh-injection=enabled matches'], [false, REV_NO_MATCH], [false, DEACTIVATED]] },
  { name: 'pod inject=false', ns: ['enabled', ''], pod: ['false', ''], expected: [[false, 'Pod has sidecar.mesh.io/inject=false label, preventing injection'], [false, REV_NO_MATCH], [false, DEACTIVATED]] },
  { name: 'pod inject=false in a revision namespace', ns: ['', '1-16'], pod: ['false', ''], expected: [[false, DEFAULT_NO_MATCH], [false, 'Pod has sidecar.mesh.io/inject=false label, preventing injection'], [false, DEACTIVATED]] },
];

function labels(injection: string, injectionKey: string, revision: string): Record<string, string> {
  return { ...(injection ? { [injectionKey]: injection } : {}), ...(revision ? { 'mesh.io/rev': revision } : {}) };
}

describe('diagnose: x check-inject verdicts from the webhook configurations', function () {
  this.timeout(20_000);
  let server: OrchApiServer;
  let client: OrchClient;
  let checker: InjectionChecker;
  let dir: string;

  before(async () => {
    server = await startOrchApiServer({ simulateCluster: false });
    for (const file of ['default-injector.yaml', 'rev-16-injector.yaml', 'never-match-injector.yaml']) await server.create(parse(fs.readFileSync(path.join(FIXTURES, file), 'utf8')));
    // Not the mesh's: its webhooks are named under another domain.
    await server.create({ apiVersion: 'admissionregistration.k8s.io/v1', kind: 'MutatingWebhookConfiguration', metadata: { name: 'other' }, webhooks: [{ name: 'x.example.com', admissionReviewVersions: ['v1'], sideEffects: 'None', clientConfig: { url: 'https://x.example.com' } }] });
    for (const [i, c] of CASES.entries()) await server.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: `case-${i}`, labels: labels(c.ns[0], 'mesh-injection', c.ns[1]) } });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-check-inject-'));
    client = orchClient(server.writeKubeconfigFile(dir));
    checker = new InjectionChecker(client);
  });

  after(async () => {
    client?.stop();
    await server?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  for (const [i, c] of CASES.entries()) {
    it(`judges "${c.name}" as the reference does`, async () => {
      const results = await checker.check(`case-${i}`, labels(c.pod[0], 'sidecar.mesh.io/inject', c.pod[1]));
      expect(results.map((r) => [r.webhook, r.revision, r.injected, r.reason])).to.deep.equal([
        ['mesh-sidecar-injector', 'default', ...c.expected[0]],
        ['mesh-sidecar-injector-1-16', '1-16', ...c.expected[1]],
        ['mesh-sidecar-injector-deactivated', 'default', ...c.expected[2]],
      ]);
    });
  }

  it('prints the table with two-space gaps, coloured marks only on a terminal', async () => {
    const results = await checker.check('case-1', {});
    const plain = webhookTable(results, false);
    expect(plain.split('\n')[0]).to.equal('WEBHOOK                            REVISION  INJECTED  REASON');
    expect(plain.split('\n')[1]).to.equal('mesh-sidecar-injector              default   ✔         Namespace label mesh-injection=enabled matches');
    expect(webhookTable(results, true).split('\n')[1]).to.equal('mesh-sidecar-injector              default   \x1b[32m✔\x1b[0m         Namespace label mesh-injection=enabled matches');
  });

  it('refuses a namespace that does not exist and label pairs that are not key=value', async () => {
    let error: Error | undefined;
    await checker.check('nowhere', {}).catch((e: Error) => (error = e));
    expect(error?.message).to.equal('namespace nowhere not found');
    expect(parseLabelPairs('app=web, version==v1')).to.deep.equal({ app: 'web', version: 'v1' });
    expect(() => parseLabelPairs('app in (a,b)')).to.throw('--labels: "app in (a" is not a label pair key=value');
  });

  describe('through meshctl', () => {
    let kubeconfig: string;
    before(async () => {
      kubeconfig = server.writeKubeconfigFile(dir);
      await server.create({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', namespace: 'case-1', labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'web' }] } });
    });
    const meshctl = (...args: string[]) => runCli('meshctl', [...args, '--orchconfig', kubeconfig]);

    it('prints the table for a pod, and for --labels in a namespace', async () => {
      const r = await meshctl('experimental', 'check-inject', 'web.case-1');
      expect(r.stderr).to.equal('');
      expect(r.code).to.equal(0);
      expect(r.stdout).to.equal(
        [
          'WEBHOOK                            REVISION  INJECTED  REASON',
          'mesh-sidecar-injector              default   ✔         Namespace label mesh-injection=enabled matches',
          `mesh-sidecar-injector-1-16         1-16      ✘         ${REV_NO_MATCH}`,
          `mesh-sidecar-injector-deactivated  default   ✘         ${DEACTIVATED}`,
          '',
        ].join('\n'),
      );
      const labelled = await meshctl('x', 'check-inject', '-n', 'case-0', '-l', 'mesh.io/rev=1-16');
      expect(labelled.code, labelled.stderr).to.equal(0);
      expect(labelled.stdout.split('\n')[2]).to.equal('mesh-sidecar-injector-1-16         1-16      ✔         Pod label mesh.io/rev=1-16 matches');
    });

    it('wants a pod or --labels, not both or neither; names a missing pod or namespace', async () => {
      expect((await meshctl('x', 'check-inject')).stderr).to.contain('check-inject requires a pod, [<type>/]<name>[.<namespace>], or --labels');
      expect((await meshctl('x', 'check-inject', 'web.case-1', '-l', 'a=b')).stderr).to.contain('check-inject takes a pod or --labels, not both');
      const missing = await meshctl('x', 'check-inject', 'nope', '-n', 'case-1');
      expect([missing.code, missing.stderr.trim()]).to.deep.equal([1, 'Error: pod nope not found in namespace case-1']);
      const noNamespace = await meshctl('x', 'check-inject', '-n', 'nowhere', '-l', 'app=web');
      expect([noNamespace.code, noNamespace.stderr.trim()]).to.deep.equal([1, 'Error: namespace nowhere not found']);
    });
  });

  describe('through meshctl, other sets of webhooks', () => {
    let other: OrchApiServer;
    let kubeconfig: string;
    before(async () => {
      other = await startOrchApiServer({ simulateCluster: false });
      kubeconfig = other.writeKubeconfigFile(dir);
    });
    after(() => other?.stop());

    it('fails when no mesh injection webhook is installed, and when two would inject', async () => {
      const none = await runCli('meshctl', ['x', 'check-inject', '-l', 'app=web', '--orchconfig', kubeconfig]);
      expect([none.code, none.stdout, none.stderr.trim()]).to.deep.equal([1, '', 'Error: no mesh injection webhooks are present (no MutatingWebhookConfiguration has a webhook named ...mesh.io)']);
      for (const name of ['mesh-sidecar-injector', 'mesh-sidecar-injector-copy']) {
        const config = parse(fs.readFileSync(path.join(FIXTURES, 'default-injector.yaml'), 'utf8'));
        await other.create({ ...config, metadata: { ...config.metadata, name } });
      }
      await other.update({ ...other.get('v1', 'Namespace', undefined, 'default'), metadata: { ...other.get('v1', 'Namespace', undefined, 'default').metadata, labels: { 'mesh-injection': 'enabled' } } });
      const two = await runCli('meshctl', ['x', 'check-inject', '-l', 'app=web', '--orchconfig', kubeconfig]);
      expect(two.code).to.equal(1);
      expect(two.stdout.split('\n').filter((l) => l.includes('✔'))).to.have.length(2);
      expect(two.stderr.trim()).to.equal('Error: multiple webhooks will inject, which can lead to errors');
    });
  });
});

import { expect } from 'chai';
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { type OrchApiServer, startOrchApiServer } from '../orch-api';
import { request } from './support';

/** SelfSubjectAccessReviews (client-node and `kubectl auth can-i`), deny rules, and the reported version. */

const KUBECTL = '/usr/bin/kubectl';

function review(verb: string, resource: string, extra: Partial<k8s.V1ResourceAttributes> = {}): k8s.V1SelfSubjectAccessReview {
  return { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: { resourceAttributes: { verb, resource, ...extra } } };
}

describe('orch API server: SelfSubjectAccessReview and the reported version', function () {
  this.timeout(30_000);
  let server: OrchApiServer;
  let auth: k8s.AuthorizationV1Api;

  before(async () => {
    server = await startOrchApiServer({ simulateCluster: false, serverVersion: 'v1.27.4' });
    auth = server.kubeConfig().makeApiClient(k8s.AuthorizationV1Api);
  });
  after(() => server.stop());
  afterEach(() => server.access.clear());

  it('allows everything for the full-access token, and lists the review as create-only in discovery', async () => {
    const answer = await auth.createSelfSubjectAccessReview({ body: review('create', 'clusterroles', { group: 'rbac.authorization.k8s.io' }) });
    expect(answer.status?.allowed).to.equal(true);
    expect(answer.spec.resourceAttributes?.resource).to.equal('clusterroles');
    const resources = (await request(server, 'GET', '/apis/authorization.k8s.io/v1')).json.resources;
    expect(resources).to.deep.equal([{ name: 'selfsubjectaccessreviews', singularName: 'selfsubjectaccessreview', namespaced: false, kind: 'SelfSubjectAccessReview', verbs: ['create'] }]);
    expect(server.requests.count({ verb: 'create', resource: 'selfsubjectaccessreviews' })).to.equal(1);
  });

  it('denies what a rule names (verb, group, resource, namespace) with its reason, and nothing else', async () => {
    server.access.deny({ verb: 'create', group: 'apps', resource: 'deployments', namespace: 'mesh-system', reason: 'no deployments for you' });
    const denied = await auth.createSelfSubjectAccessReview({ body: review('create', 'deployments', { group: 'apps', namespace: 'mesh-system' }) });
    expect(denied.status).to.deep.include({ allowed: false, reason: 'no deployments for you' });
    for (const other of [review('get', 'deployments', { group: 'apps', namespace: 'mesh-system' }), review('create', 'deployments', { group: 'apps', namespace: 'default' }), review('create', 'deployments', { namespace: 'mesh-system' })]) {
      expect((await auth.createSelfSubjectAccessReview({ body: other })).status?.allowed, JSON.stringify(other.spec)).to.equal(true);
    }
  });

  it('refuses a review without attributes (422), and other verbs on the review type (405)', async () => {
    const empty = await request(server, 'POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', { body: { spec: {} } });
    expect(empty.status).to.equal(422);
    expect(empty.json.message).to.contain('exactly one of nonResourceAttributes or resourceAttributes must be specified');
    expect((await request(server, 'GET', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews')).status).to.equal(405);
  });

  it('reports the configured version at /version', async () => {
    const version = (await request(server, 'GET', '/version', { token: '' })).json;
    expect(version).to.deep.include({ major: '1', minor: '27', gitVersion: 'v1.27.4' });
  });

  it('answers `kubectl auth can-i` yes, then no for a denied resource', async function () {
    if (!fs.existsSync(KUBECTL)) this.skip();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'orch-can-i-'));
    try {
      const kubeconfig = server.writeKubeconfigFile(dir);
      const canI = (args: string[]) =>
        new Promise<{ code: number; stdout: string }>((resolve) =>
          execFile(KUBECTL, ['--kubeconfig', kubeconfig, 'auth', 'can-i', ...args], { timeout: 20_000, env: { ...process.env, HOME: dir } }, (err, stdout) =>
            resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout }),
          ),
        );
      expect(await canI(['create', 'namespaces'])).to.deep.equal({ code: 0, stdout: 'yes\n' });
      server.access.deny({ verb: 'create', resource: 'namespaces' });
      const no = await canI(['create', 'namespaces']);
      expect(no.stdout).to.equal('no\n');
      expect(no.code).to.equal(1);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

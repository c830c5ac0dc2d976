import { expect } from 'chai';
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import * as k8s from '@kubernetes/client-node';
import { type OrchApiServer, startOrchApiServer } from '../orch-api';
import { makeServingIdentity, type ServingIdentity } from '../orch-api/tls';
import { apiError } from './support';

/** A webhook server as a real one would be: HTTPS, AdmissionReview v1 in and out. */
interface Hook {
  url: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  reviews: any[];
  close: () => Promise<void>;
}

async function startHook(identity: ServingIdentity): Promise<Hook> {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const reviews: any[] = [];
  const server = https.createServer({ key: identity.keyPem, cert: identity.certPem }, (req, res) => {
    let text = '';
    req.on('data', (c) => (text += c));
    req.on('end', () => {
      const review = JSON.parse(text);
      reviews.push({ path: req.url, review });
      const request = review.request;
      const answer = (response: object) => {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: request.uid, ...response } }));
      };
      const path = (req.url ?? '').split('?')[0];
      if (path === '/mutate') {
        const patch = [{ op: 'add', path: '/metadata/labels', value: { ...(request.object.metadata.labels ?? {}), injected: 'yes' } }];
        return answer({ allowed: true, patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(patch)).toString('base64'), warnings: ['mutated by the test hook'] });
      }
      if (path === '/validate') {
        const obj = request.operation === 'DELETE' ? request.oldObject : request.object;
        if (obj.metadata.labels?.deny === 'true') return answer({ allowed: false, status: { code: 403, message: `label deny is set on ${obj.metadata.name}` } });
        return answer({ allowed: true });
      }
      if (path === '/slow') return void setTimeout(() => answer({ allowed: true }), 2500);
      res.writeHead(500);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    reviews,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

describe('orch API server: admission webhooks', () => {
  let server: OrchApiServer;
  let core: k8s.CoreV1Api;
  let identity: ServingIdentity;
  let hook: Hook;
  let caBundle: string;

  before(async () => {
    server = await startOrchApiServer({ simulateCluster: false });
    core = server.kubeConfig().makeApiClient(k8s.CoreV1Api);
    identity = await makeServingIdentity(['hooks.hook-system.svc']);
    caBundle = Buffer.from(identity.caPem).toString('base64');
    hook = await startHook(identity);
    server.serviceEndpoints.set('hook-system/hooks', hook.url);
    await core.createNamespace({ body: { metadata: { name: 'injected', labels: { inject: 'on' } } } });
  });
  after(async () => {
    await server.stop();
    await hook.close();
  });
  afterEach(async () => {
    for (const kind of ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration']) {
      for (const c of server.list('admissionregistration.k8s.io/v1', kind)) await server.delete('admissionregistration.k8s.io/v1', kind, undefined, c.metadata.name);
    }
    hook.reviews.length = 0;
  });

  const configure = (kind: 'MutatingWebhookConfiguration' | 'ValidatingWebhookConfiguration', webhook: object) =>
    server.create({ apiVersion: 'admissionregistration.k8s.io/v1', kind, metadata: { name: `cfg-${kind.length}` }, webhooks: [{ admissionReviewVersions: ['v1'], sideEffects: 'None', ...webhook }] });

  const podRule = { apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['pods'] };
  const pod = (name: string, labels: Record<string, string> = {}) => ({ metadata: { name, labels }, spec: { containers: [{ name: 'c', image: 'i' }] } });

  it('calls a mutating webhook through its service reference, verifying the certificate for the service name, and applies its JSON patch', async () => {
    await configure('MutatingWebhookConfiguration', {
      name: 'inject.test.io',
      clientConfig: { service: { namespace: 'hook-system', name: 'hooks', path: '/mutate' }, caBundle },
      rules: [podRule],
      namespaceSelector: { matchLabels: { inject: 'on' } },
    });
    const created = await core.createNamespacedPod({ namespace: 'injected', body: pod('p1', { app: 'x' }) });
    expect(created.metadata?.labels).to.deep.equal({ app: 'x', injected: 'yes' });
    const { path, review } = hook.reviews[0];
    expect(path).to.equal('/mutate?timeout=10s');
    expect(review).to.deep.include({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' });
    expect(review.request).to.deep.include({
      kind: { group: '', version: 'v1', kind: 'Pod' },
      resource: { group: '', version: 'v1', resource: 'pods' },
      name: 'p1',
      namespace: 'injected',
      operation: 'CREATE',
      dryRun: false,
    });
    expect(review.request.uid).to.match(/^[0-9a-f-]{36}$/);
    expect(review.request.object.metadata.name).to.equal('p1');
    expect(server.webhookCalls.at(-1)).to.deep.include({ webhook: 'inject.test.io', allowed: true });
    // The namespace selector leaves other namespaces alone.
    const plain = await core.createNamespacedPod({ namespace: 'default', body: pod('p2') });
    expect(plain.metadata?.labels).to.deep.equal({});
    expect(hook.reviews).to.have.length(1);
  });

  it('does not trust a webhook certificate that names neither the URL\'s IP nor the service (fails closed)', async () => {
    await configure('ValidatingWebhookConfiguration', {
      name: 'guard.test.io',
      clientConfig: { url: `${hook.url}/validate`, caBundle: Buffer.from(identity.caPem).toString('base64') },
      rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE', 'DELETE'], resources: ['configmaps'] }],
    });
    // A certificate for the service name only does not verify for an IP URL.
    const denied = await apiError(core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'cm-deny', labels: { deny: 'true' } } } }));
    expect(denied.code).to.equal(500);
    expect(denied.status.message).to.match(/^Internal error occurred: failed calling webhook "guard.test.io": failed to call webhook: Post "https:\/\/127\.0\.0\.1:\d+\/validate\?timeout=10s": .*IP: 127\.0\.0\.1 is not in the cert's list/);
  });

  describe('with a certificate for the service name and the IP', () => {
    let ipHook: Hook;
    let ipCa: string;
    before(async () => {
      const both = await makeServingIdentity(['hooks.hook-system.svc', '127.0.0.1']);
      ipCa = Buffer.from(both.caPem).toString('base64');
      ipHook = await startHook(both);
    });
    after(() => ipHook.close());
    afterEach(() => {
      ipHook.reviews.length = 0;
    });

    it('denies with `admission webhook "<name>" denied the request: <message>` and the webhook\'s code', async () => {
      await configure('ValidatingWebhookConfiguration', {
        name: 'guard.test.io',
        clientConfig: { url: `${ipHook.url}/validate`, caBundle: ipCa },
        rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE', 'DELETE'], resources: ['configmaps'] }],
        objectSelector: { matchExpressions: [{ key: 'guarded', operator: 'Exists' }] },
      });
      const denied = await apiError(core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'cm-deny', labels: { deny: 'true', guarded: '1' } } } }));
      expect(denied.code).to.equal(403);
      expect(denied.status.message).to.equal('admission webhook "guard.test.io" denied the request: label deny is set on cm-deny');
      await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'cm-ok', labels: { guarded: '1' } } } });
      const update = await apiError(core.patchNamespacedConfigMap({ namespace: 'default', name: 'cm-ok', body: { metadata: { labels: { deny: 'true' } } } }, k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch)));
      expect(update.code).to.equal(403);
      // Not selected by the object selector: no call.
      const calls = ipHook.reviews.length;
      await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'cm-free', labels: { deny: 'true' } } } });
      expect(ipHook.reviews.length).to.equal(calls);
      // Delete is validated against the old object.
      await server.update({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm-ok', namespace: 'default', labels: { guarded: '1', deny: 'true' } } });
      const del = await apiError(core.deleteNamespacedConfigMap({ namespace: 'default', name: 'cm-ok' }));
      expect(del.status.message).to.equal('admission webhook "guard.test.io" denied the request: label deny is set on cm-ok');
      expect(ipHook.reviews.at(-1).review.request.operation).to.equal('DELETE');
    });

    it('honours timeoutSeconds and failurePolicy: Ignore lets the request through, Fail refuses it', async () => {
      await configure('ValidatingWebhookConfiguration', {
        name: 'slow.test.io',
        clientConfig: { url: `${ipHook.url}/slow`, caBundle: ipCa },
        rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['secrets'] }],
        timeoutSeconds: 1,
        failurePolicy: 'Ignore',
      });
      const started = Date.now();
      await core.createNamespacedSecret({ namespace: 'default', body: { metadata: { name: 's-ignored' } } });
      expect(Date.now() - started).to.be.within(900, 2400);
      expect(server.webhookCalls.at(-1)?.error).to.match(/slow\?timeout=1s/);
      const [cfg] = server.list('admissionregistration.k8s.io/v1', 'ValidatingWebhookConfiguration');
      cfg.webhooks[0].failurePolicy = 'Fail';
      await server.update(cfg);
      const failed = await apiError(core.createNamespacedSecret({ namespace: 'default', body: { metadata: { name: 's-failed' } } }));
      expect(failed.code).to.equal(500);
      expect(failed.status.message).to.match(/^Internal error occurred: failed calling webhook "slow.test.io"/);
    });

    it('runs mutating webhooks before validation and validating ones after, on pods created for direct calls only when asked', async () => {
      await configure('MutatingWebhookConfiguration', { name: 'm.test.io', clientConfig: { url: `${ipHook.url}/mutate`, caBundle: ipCa }, rules: [{ ...podRule, resources: ['*'] }] });
      await configure('ValidatingWebhookConfiguration', { name: 'v.test.io', clientConfig: { url: `${ipHook.url}/validate`, caBundle: ipCa }, rules: [podRule] });
      const direct = await server.create({ apiVersion: 'v1', kind: 'Pod', ...pod('direct') });
      expect(direct.metadata.labels).to.deep.equal({});
      const admitted = await server.create({ apiVersion: 'v1', kind: 'Pod', ...pod('admitted') }, { admission: true });
      expect(admitted.metadata.labels).to.deep.equal({ injected: 'yes' });
      const order = ipHook.reviews.map((r) => r.path.split('?')[0]);
      expect(order).to.deep.equal(['/mutate', '/validate']);
      expect(ipHook.reviews[1].review.request.object.metadata.labels).to.deep.equal({ injected: 'yes' });
    });
  });

  it('fails closed when a service reference has no registered endpoint', async () => {
    await configure('ValidatingWebhookConfiguration', { name: 'nowhere.test.io', clientConfig: { service: { namespace: 'x', name: 'y' }, caBundle }, rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['serviceaccounts'] }] });
    const err = await apiError(core.createNamespacedServiceAccount({ namespace: 'default', body: { metadata: { name: 'sa' } } }));
    expect(err.status.message).to.contain('failed calling webhook "nowhere.test.io"');
    expect(err.status.message).to.contain('service "x/y" has no endpoint registered');
  });
});

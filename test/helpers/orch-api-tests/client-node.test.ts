import { expect } from 'chai';
import * as k8s from '@kubernetes/client-node';
import { importJWK, jwtVerify } from 'jose';
import { type OrchApiServer, startOrchApiServer } from '../orch-api';
import { apiError, request } from './support';

describe('orch API server: typed client-node APIs (TokenRequest, Leases, webhook configurations)', () => {
  let server: OrchApiServer;
  let kc: k8s.KubeConfig;

  before(async () => {
    server = await startOrchApiServer({ simulateCluster: false });
    kc = server.kubeConfig();
  });
  after(() => server.stop());

  it('issues TokenRequest JWTs for a service account: subject, audiences, expiry, bound pod; verifiable with the published keys and accepted as bearer tokens', async () => {
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const sa = await core.createNamespacedServiceAccount({ namespace: 'default', body: { metadata: { name: 'meshd' } } });
    const pod = await core.createNamespacedPod({ namespace: 'default', body: { metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'i' }] } } });
    const result = await core.createNamespacedServiceAccountToken({
      namespace: 'default',
      name: 'meshd',
      body: { spec: { audiences: ['mesh-ca'], expirationSeconds: 1200, boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'p', uid: pod.metadata?.uid } } },
    });
    const token = result.status?.token as string;
    expect(result.status?.expirationTimestamp?.getTime()).to.be.closeTo(Date.now() + 1_200_000, 5000);
    const jwks = (await request(server, 'GET', '/openid/v1/jwks')).json;
    const { payload } = await jwtVerify(token, await importJWK(jwks.keys[0], 'ES256'), { audience: 'mesh-ca', issuer: 'https://kubernetes.default.svc.cluster.local' });
    expect(payload.sub).to.equal('system:serviceaccount:default:meshd');
    expect(payload['kubernetes.io']).to.deep.equal({ namespace: 'default', serviceaccount: { name: 'meshd', uid: sa.metadata?.uid }, pod: { name: 'p', uid: pod.metadata?.uid } });
    expect((payload.exp as number) - (payload.iat as number)).to.equal(1200);
    expect((await request(server, 'GET', '/api/v1/namespaces', { token })).status).to.equal(200);
    const short = await apiError(core.createNamespacedServiceAccountToken({ namespace: 'default', name: 'meshd', body: { spec: { audiences: [], expirationSeconds: 60 } } }));
    expect(short.code).to.equal(400);
    const missing = await apiError(core.createNamespacedServiceAccountToken({ namespace: 'default', name: 'nobody', body: { spec: { audiences: [] } } }));
    expect(missing.status.message).to.equal('serviceaccounts "nobody" not found');
  });

  it('creates and renews Leases under optimistic concurrency: a stale holder gets 409', async () => {
    const leases = kc.makeApiClient(k8s.CoordinationV1Api);
    const now = new k8s.V1MicroTime();
    const created = await leases.createNamespacedLease({ namespace: 'kube-system', body: { metadata: { name: 'leader' }, spec: { holderIdentity: 'a', leaseDurationSeconds: 15, acquireTime: now, renewTime: now } } });
    const racing = await apiError(leases.createNamespacedLease({ namespace: 'kube-system', body: { metadata: { name: 'leader' }, spec: { holderIdentity: 'b' } } }));
    expect(racing.status.reason).to.equal('AlreadyExists');
    const renewed = await leases.replaceNamespacedLease({ namespace: 'kube-system', name: 'leader', body: { ...created, spec: { ...created.spec, renewTime: new k8s.V1MicroTime() } } });
    expect(Number(renewed.metadata?.resourceVersion)).to.be.greaterThan(Number(created.metadata?.resourceVersion));
    const stale = await apiError(leases.replaceNamespacedLease({ namespace: 'kube-system', name: 'leader', body: { ...created, spec: { ...created.spec, holderIdentity: 'b' } } }));
    expect(stale.code).to.equal(409);
    expect(stale.status.message).to.equal('Operation cannot be fulfilled on leases.coordination.k8s.io "leader": the object has been modified; please apply your changes to the latest version and try again');
    const read = await leases.readNamespacedLease({ namespace: 'kube-system', name: 'leader' });
    expect(read.spec?.holderIdentity).to.equal('a');
    expect(String(read.spec?.renewTime)).to.match(/^\d{4}-\d\d-\d\dT[\d:.]+Z$/);
  });

  it('stores webhook configurations and lets their caBundle be patched', async () => {
    const admission = kc.makeApiClient(k8s.AdmissionregistrationV1Api);
    await admission.createMutatingWebhookConfiguration({
      body: {
        metadata: { name: 'injector' },
        webhooks: [{ name: 'inject.mesh.io', admissionReviewVersions: ['v1'], sideEffects: 'None', clientConfig: { service: { namespace: 'mesh-system', name: 'meshd', path: '/inject' } }, rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['pods'] }] }],
      },
    });
    const bundle = Buffer.from('-----BEGIN CERTIFICATE-----\n').toString('base64');
    const patched = await admission.patchMutatingWebhookConfiguration({ name: 'injector', body: [{ op: 'add', path: '/webhooks/0/clientConfig/caBundle', value: bundle }] }, k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.JsonPatch));
    expect(patched.webhooks?.[0].clientConfig.caBundle).to.equal(bundle);
    expect(patched.metadata?.generation).to.equal(2);
    const validating = await admission.listValidatingWebhookConfiguration();
    expect(validating.items).to.deep.equal([]);
  });

  it('serves EndpointSlices through DiscoveryV1Api', async () => {
    const discovery = kc.makeApiClient(k8s.DiscoveryV1Api);
    await discovery.createNamespacedEndpointSlice({
      namespace: 'default',
      body: { metadata: { name: 's1', labels: { 'kubernetes.io/service-name': 'svc' } }, addressType: 'IPv4', endpoints: [{ addresses: ['10.0.0.1'], conditions: { ready: true } }], ports: [{ name: 'http', port: 80, protocol: 'TCP' }] },
    });
    const list = await discovery.listEndpointSliceForAllNamespaces({ labelSelector: 'kubernetes.io/service-name=svc' });
    expect(list.items.map((s) => s.endpoints[0].addresses)).to.deep.equal([['10.0.0.1']]);
  });
});

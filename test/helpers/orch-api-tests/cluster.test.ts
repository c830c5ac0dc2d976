import { expect } from 'chai';
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import * as k8s from '@kubernetes/client-node';
import { NODE_NAME, type OrchApiServer, POD_IP_ANNOTATION, startOrchApiServer } from '../orch-api';
import { makeServingIdentity } from '../orch-api/tls';
import { apiError, waitUntil } from './support';

describe('orch API server: the simulated cluster (kubelet and controllers)', () => {
  let server: OrchApiServer;
  let core: k8s.CoreV1Api;
  let apps: k8s.AppsV1Api;
  let discovery: k8s.DiscoveryV1Api;

  beforeEach(async () => {
    server = await startOrchApiServer();
    const kc = server.kubeConfig();
    core = kc.makeApiClient(k8s.CoreV1Api);
    apps = kc.makeApiClient(k8s.AppsV1Api);
    discovery = kc.makeApiClient(k8s.DiscoveryV1Api);
    await core.createNamespace({ body: { metadata: { name: 'shop' } } });
  });
  afterEach(() => server.stop());

  const deployment = (replicas: number): k8s.V1Deployment => ({
    metadata: { name: 'web' },
    spec: {
      replicas,
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { serviceAccountName: 'web', containers: [{ name: 'app', image: 'web:1', ports: [{ name: 'http', containerPort: 8080 }] }] } },
    },
  });
  const pods = async (labelSelector = 'app=web') => (await core.listNamespacedPod({ namespace: 'shop', labelSelector })).items;

  it('has a node with topology labels, default service accounts and the system namespaces', async () => {
    const node = await core.readNode({ name: NODE_NAME });
    expect(node.metadata?.labels).to.include({ 'topology.kubernetes.io/region': 'region-1', 'topology.kubernetes.io/zone': 'zone-a', 'kubernetes.io/hostname': NODE_NAME });
    expect(node.status?.conditions?.[0]).to.include({ type: 'Ready', status: 'True' });
    await waitUntil('the default account', () => server.get('v1', 'ServiceAccount', 'shop', 'default') !== undefined);
    expect((await core.listNamespace()).items.map((n) => n.metadata?.name)).to.include.members(['default', 'kube-system', 'shop']);
  });

  it('runs a Deployment: a ReplicaSet, pods bound to the node with IPs, Running and Ready; status follows; scaling and deletion follow', async () => {
    await apps.createNamespacedDeployment({ namespace: 'shop', body: deployment(2) });
    await waitUntil('two running pods', async () => (await pods()).filter((p) => p.status?.phase === 'Running').length === 2);
    const [pod] = await pods();
    expect(pod.spec?.nodeName).to.equal(NODE_NAME);
    expect(pod.status?.podIP).to.match(/^10\.244\.\d+\.\d+$/);
    expect(pod.status?.conditions?.find((c) => c.type === 'Ready')?.status).to.equal('True');
    expect(pod.status?.containerStatuses?.[0]).to.include({ name: 'app', ready: true });
    expect(pod.metadata?.ownerReferences?.[0]).to.include({ kind: 'ReplicaSet', controller: true });
    expect(pod.metadata?.labels?.['pod-template-hash']).to.match(/^[a-z0-9]+$/);
    await waitUntil('deployment status', async () => (await apps.readNamespacedDeployment({ namespace: 'shop', name: 'web' })).status?.readyReplicas === 2);

    await apps.patchNamespacedDeploymentScale({ namespace: 'shop', name: 'web', body: { spec: { replicas: 3 } } }, k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch));
    await waitUntil('three pods', async () => (await pods()).length === 3);
    await apps.patchNamespacedDeployment({ namespace: 'shop', name: 'web', body: { spec: { replicas: 1 } } }, k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch));
    await waitUntil('one pod', async () => (await pods()).length === 1);

    // A new template: a new ReplicaSet replaces the old one.
    const before = (await pods())[0].metadata?.labels?.['pod-template-hash'];
    await apps.patchNamespacedDeployment({ namespace: 'shop', name: 'web', body: { spec: { template: { metadata: { annotations: { rev: '2' } } } } } }, k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch));
    await waitUntil('the new pod replaced the old', async () => {
      const now = await pods();
      return now.length === 1 && now[0].metadata?.labels?.['pod-template-hash'] !== before;
    });
    expect((await apps.listNamespacedReplicaSet({ namespace: 'shop' })).items).to.have.length(1);

    await apps.deleteNamespacedDeployment({ namespace: 'shop', name: 'web' });
    await waitUntil('pods and replica sets gone', async () => (await pods()).length === 0 && (await apps.listNamespacedReplicaSet({ namespace: 'shop' })).items.length === 0);
  });

  it('honours the pod-ip annotation and a custom allocator', async () => {
    await core.createNamespacedPod({ namespace: 'shop', body: { metadata: { name: 'chosen', annotations: { [POD_IP_ANNOTATION]: '127.0.0.5' } }, spec: { containers: [{ name: 'c', image: 'i' }] } } });
    await waitUntil('an IP', () => server.get('v1', 'Pod', 'shop', 'chosen').status.podIP !== undefined);
    expect(server.get('v1', 'Pod', 'shop', 'chosen').status.podIP).to.equal('127.0.0.5');
    await server.stop();
    let n = 0;
    server = await startOrchApiServer({ podIpAllocator: () => `127.1.0.${++n}` });
    await server.create({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'alloc', namespace: 'default' }, spec: { containers: [{ name: 'c', image: 'i' }] } });
    await waitUntil('an IP', () => server.get('v1', 'Pod', 'default', 'alloc').status.podIP !== undefined);
    expect(server.get('v1', 'Pod', 'default', 'alloc').status.podIP).to.equal('127.1.0.1');
  });

  it('keeps EndpointSlices for selecting Services: addresses, targetRef, node, zone, conditions, named ports and appProtocol', async () => {
    await core.createNamespacedService({ namespace: 'shop', body: { metadata: { name: 'web' }, spec: { selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 'http', appProtocol: 'http' }, { name: 'grpc', port: 90, targetPort: 9090 }] } } });
    await apps.createNamespacedDeployment({ namespace: 'shop', body: deployment(2) });
    const slices = async () => (await discovery.listNamespacedEndpointSlice({ namespace: 'shop', labelSelector: 'kubernetes.io/service-name=web' })).items;
    await waitUntil('two ready endpoints', async () => (await slices()).flatMap((s) => s.endpoints ?? []).filter((e) => e.conditions?.ready).length === 2);
    const [slice] = await slices();
    expect(slice.addressType).to.equal('IPv4');
    expect(slice.metadata?.labels?.['endpointslice.kubernetes.io/managed-by']).to.equal('endpointslice-controller.k8s.io');
    expect(slice.metadata?.ownerReferences?.[0]).to.include({ kind: 'Service', name: 'web' });
    expect(slice.ports).to.deep.equal([
      { name: 'http', port: 8080, protocol: 'TCP', appProtocol: 'http' },
      { name: 'grpc', port: 9090, protocol: 'TCP' },
    ]);
    const podList = await pods();
    const endpoint = slice.endpoints?.find((e) => e.targetRef?.name === podList[0].metadata?.name);
    expect(endpoint).to.deep.include({ addresses: [podList[0].status?.podIP], nodeName: NODE_NAME, zone: 'zone-a' });
    expect(endpoint?.conditions).to.deep.equal({ ready: true, serving: true, terminating: false });
    expect(endpoint?.targetRef).to.include({ kind: 'Pod', namespace: 'shop', uid: podList[0].metadata?.uid });

    await apps.patchNamespacedDeployment({ namespace: 'shop', name: 'web', body: { spec: { replicas: 1 } } }, k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch));
    await waitUntil('one endpoint', async () => (await slices()).flatMap((s) => s.endpoints ?? []).length === 1);
    await core.patchNamespacedService({ namespace: 'shop', name: 'web', body: { spec: { selector: { app: 'nothing' } } } }, k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch));
    await waitUntil('no endpoints', async () => (await slices()).flatMap((s) => s.endpoints ?? []).length === 0);
    await core.deleteNamespacedService({ namespace: 'shop', name: 'web' });
    await waitUntil('no slices', async () => (await slices()).length === 0);
  });

  it('with podTerminationMs, a deleted pod stays Terminating with a terminating endpoint, then goes', async () => {
    await server.stop();
    server = await startOrchApiServer({ podTerminationMs: 300 });
    const kc = server.kubeConfig();
    core = kc.makeApiClient(k8s.CoreV1Api);
    discovery = kc.makeApiClient(k8s.DiscoveryV1Api);
    await core.createNamespace({ body: { metadata: { name: 'shop' } } });
    await core.createNamespacedService({ namespace: 'shop', body: { metadata: { name: 'web' }, spec: { selector: { app: 'web' }, ports: [{ port: 80 }] } } });
    await core.createNamespacedPod({ namespace: 'shop', body: { metadata: { name: 'p', labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'i' }] } } });
    const endpoints = async () => (await discovery.listNamespacedEndpointSlice({ namespace: 'shop' })).items.flatMap((s) => s.endpoints ?? []);
    await waitUntil('a ready endpoint', async () => (await endpoints())[0]?.conditions?.ready === true);
    await core.deleteNamespacedPod({ namespace: 'shop', name: 'p' });
    expect((await core.readNamespacedPod({ namespace: 'shop', name: 'p' })).metadata?.deletionTimestamp).to.be.instanceOf(Date);
    await waitUntil('a terminating endpoint', async () => (await endpoints())[0]?.conditions?.terminating === true);
    expect((await endpoints())[0].conditions).to.deep.equal({ ready: false, serving: true, terminating: true });
    await waitUntil('the pod is gone', () => server.get('v1', 'Pod', 'shop', 'p') === undefined, 3000);
    await waitUntil('no endpoints', async () => (await endpoints()).length === 0);
  });

  it('creates pods through admission, so an injection webhook changes them', async () => {
    const identity = await makeServingIdentity(['injector.mesh-system.svc']);
    const hook = https.createServer({ key: identity.keyPem, cert: identity.certPem }, (req, res) => {
      let text = '';
      req.on('data', (c) => (text += c));
      req.on('end', () => {
        const review = JSON.parse(text);
        const patch = [{ op: 'add', path: '/spec/containers/-', value: { name: 'sidecar', image: 'proxy:1' } }];
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: review.request.uid, allowed: true, patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(patch)).toString('base64') } }));
      });
    });
    await new Promise<void>((resolve) => hook.listen(0, '127.0.0.1', resolve));
    try {
      server.serviceEndpoints.set('mesh-system/injector', `https://127.0.0.1:${(hook.address() as AddressInfo).port}`);
      await server.create({
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'MutatingWebhookConfiguration',
        metadata: { name: 'injector' },
        webhooks: [{ name: 'inject.mesh.io', admissionReviewVersions: ['v1'], sideEffects: 'None', clientConfig: { service: { namespace: 'mesh-system', name: 'injector', path: '/inject' }, caBundle: Buffer.from(identity.caPem).toString('base64') }, rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['pods'] }] }],
      });
      await apps.createNamespacedDeployment({ namespace: 'shop', body: deployment(1) });
      await waitUntil('an injected pod', async () => (await pods()).some((p) => p.spec?.containers.map((c) => c.name).join() === 'app,sidecar'));
      const [pod] = await pods();
      expect(pod.status?.containerStatuses?.map((c) => c.name)).to.deep.equal(['app', 'sidecar']);
    } finally {
      await new Promise<void>((resolve) => hook.close(() => resolve()));
    }
  });

  it('terminates a namespace: Terminating while its content goes, then gone; new content is refused meanwhile', async () => {
    await core.createNamespacedConfigMap({ namespace: 'shop', body: { metadata: { name: 'cfg' } } });
    const deleted = await core.deleteNamespace({ name: 'shop' });
    expect((deleted as k8s.V1Namespace).status?.phase).to.equal('Terminating');
    const refused = await apiError(core.createNamespacedConfigMap({ namespace: 'shop', body: { metadata: { name: 'late' } } }));
    if (refused.code !== 404) {
      expect(refused.code).to.equal(403);
      expect(refused.status.message).to.equal('unable to create new content in namespace shop because it is being terminated');
    }
    await waitUntil('the namespace is gone', () => server.get('v1', 'Namespace', undefined, 'shop') === undefined);
    expect(server.list('v1', 'ConfigMap', 'shop')).to.deep.equal([]);
  });
});

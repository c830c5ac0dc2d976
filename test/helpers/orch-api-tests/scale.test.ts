import { expect } from 'chai';
import * as k8s from '@kubernetes/client-node';
import { type OrchApiServer, startOrchApiServer } from '../orch-api';
import { waitUntil } from './support';

/**
 * The size a benchmark needs: 1,000 Services and 10,000 endpoints (1,000 slices of 10), listed
 * and watched through client-node. The bounds are loose (a busy 2-core machine) but would catch
 * a quadratic store or per-watcher serialization.
 */
describe('orch API server: 1,000 Services and 10,000 endpoints', function () {
  this.timeout(60_000);
  let server: OrchApiServer;

  before(async () => {
    server = await startOrchApiServer({ simulateCluster: false });
    for (let i = 0; i < 1000; i++) {
      await server.create({ apiVersion: 'v1', kind: 'Service', metadata: { name: `svc-${i}`, namespace: 'default' }, spec: { ports: [{ name: 'http', port: 80 }] } });
      await server.create({
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: { name: `svc-${i}-x`, namespace: 'default', labels: { 'kubernetes.io/service-name': `svc-${i}` } },
        addressType: 'IPv4',
        ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
        endpoints: Array.from({ length: 10 }, (_, j) => ({ addresses: [`10.1.${i % 250}.${j + 1}`], conditions: { ready: true } })),
      });
    }
  });
  after(() => server.stop());

  it('lists them quickly and delivers a burst of changes to several informers', async () => {
    const kc = server.kubeConfig();
    const discovery = kc.makeApiClient(k8s.DiscoveryV1Api);
    let started = Date.now();
    const slices = await discovery.listEndpointSliceForAllNamespaces();
    expect(slices.items.flatMap((s) => s.endpoints)).to.have.length(10_000);
    expect(Date.now() - started).to.be.below(3000);
    const informers = [0, 1, 2].map(() => k8s.makeInformer(kc, '/apis/discovery.k8s.io/v1/endpointslices', () => discovery.listEndpointSliceForAllNamespaces()));
    let updates = 0;
    for (const informer of informers) informer.on('update', () => updates++);
    try {
      await Promise.all(informers.map((i) => i.start()));
      started = Date.now();
      for (let i = 0; i < 1000; i++) {
        const slice = server.get('discovery.k8s.io/v1', 'EndpointSlice', 'default', `svc-${i}-x`);
        slice.endpoints[0].conditions.ready = false;
        await server.update(slice);
      }
      await waitUntil('every informer saw every change', () => updates === 3000, 20_000);
      expect(Date.now() - started).to.be.below(10_000);
    } finally {
      await Promise.all(informers.map((i) => i.stop()));
    }
  });
});

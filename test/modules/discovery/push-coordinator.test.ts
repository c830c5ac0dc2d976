import { expect } from 'chai';
import { MemoryConfigStore } from '../../../src/modules/config/memory-store';
import { ConfigResource } from '../../../src/modules/config/resource';
import { PushCoordinator, PushCoordinatorOptions, PushPipelineObserver } from '../../../src/modules/discovery/push-coordinator';
import { Logging } from '../../../src/modules/logging';
import { defaultLoggingOptions } from '../../../src/modules/logging/options';
import { PushContext } from '../../../src/modules/model/push-context';
import { sidecarScope } from '../../../src/modules/generators/sidecar/scope';
import { proxyOf } from '../../helpers/push';

/** When a change reaches the push target, with the real debounce (PILOT_DEBOUNCE_AFTER). */
describe('push coordinator: debounce of config changes', () => {
  const stops: Array<() => void> = [];
  afterEach(() => stops.splice(0).forEach((stop) => stop()));

  function coordinator(debounceAfterMs: number): { store: MemoryConfigStore; pushes: number[]; debounced: number[]; contexts: PushContext[] } {
    const store = new MemoryConfigStore();
    const logging = new Logging('pilot-discovery');
    logging.configure({ ...defaultLoggingOptions('pilot-discovery'), defaultOutputLevel: 'none' });
    const debounced: number[] = [];
    const observer: PushPipelineObserver = {
      inboundUpdate: () => undefined,
      debounced: (seconds) => debounced.push(seconds),
      pushContextBuilt: () => undefined,
      pushTriggered: () => undefined,
      duplicateHost: () => undefined,
    };
    const options: PushCoordinatorOptions = {
      domain: 'cluster.local',
      rootNamespace: 'mesh-system',
      debounceAfterMs,
      debounceMaxMs: 10_000,
      edsDebounce: true,
      extraServiceEntries: [],
      platformRegistries: [],
      selectWorkloadEntries: true,
    };
    const c = new PushCoordinator(store, options, observer, logging);
    const pushes: number[] = [];
    const contexts: PushContext[] = [];
    contexts.push(
      c.start((push) => {
        pushes.push(Date.now());
        contexts.push(push);
      }),
    );
    stops.push(() => c.stop());
    return { store, pushes, debounced, contexts };
  }

  const entry = (address: string): ConfigResource => ({
    apiVersion: 'networking.mesh.io/v1',
    kind: 'WorkloadEntry',
    metadata: { name: 'w', namespace: 'foo', labels: {}, annotations: {} },
    spec: { address },
  });

  it('waits the quiet period after a change that arrives as it happens', async () => {
    const { store, pushes } = coordinator(300);
    const applied = Date.now();
    store.applyBatch([{ sourceId: 'a', resources: [entry('10.0.0.1')] }]);
    await new Promise((r) => setTimeout(r, 200));
    expect(pushes).to.deep.equal([]);
    await new Promise((r) => setTimeout(r, 300));
    expect(pushes).to.have.length(1);
    expect(pushes[0] - applied).to.be.at.least(295);
  });

  it('counts the quiet period from when the source saw the change, so a source that waited for quiet is not waited for twice', async () => {
    const { store, pushes, debounced } = coordinator(300);
    const applied = Date.now();
    store.applyBatch([{ sourceId: 'a', resources: [entry('10.0.0.1')] }], applied - 250);
    await new Promise((r) => setTimeout(r, 150));
    expect(pushes).to.have.length(1, 'only 50 ms of quiet were left');
    expect(pushes[0] - applied).to.be.below(150);
    expect(debounced[0]).to.be.below(0.15, 'pilot_debounce_time counts from arrival');
  });

  it('keeps the sidecar scopes of the previous push when only endpoints moved, and works them out again when a service changed', async () => {
    const { store, pushes, contexts } = coordinator(10);
    const service = (port: number): ConfigResource => ({
      apiVersion: 'networking.mesh.io/v1',
      kind: 'ServiceEntry',
      metadata: { name: 'api', namespace: 'foo', labels: {}, annotations: {} },
      spec: { hosts: ['api.foo.svc.cluster.local'], location: 'MESH_INTERNAL', resolution: 'STATIC', ports: [{ number: port, name: 'http', protocol: 'HTTP' }], workloadSelector: { labels: { app: 'api' } } },
    });
    const workload = (address: string): ConfigResource => ({ ...entry(address), spec: { address, labels: { app: 'api' } } });
    store.applyBatch([{ sourceId: 'svc', resources: [service(80)] }, { sourceId: 'w', resources: [workload('10.0.0.1')] }]);
    await waitFor(() => pushes.length === 1);
    const proxy = proxyOf('10.0.0.9', 'foo');
    const first = sidecarScope(contexts[1], proxy);
    expect(first.services.map((s) => s.hostname)).to.deep.equal(['api.foo.svc.cluster.local']);

    store.applyBatch([{ sourceId: 'w', resources: [workload('10.0.0.2')] }]);
    await waitFor(() => pushes.length === 2);
    expect(sidecarScope(contexts[2], proxyOf('10.0.0.9', 'foo'))).to.equal(first, 'an endpoint push reads the same scope');
    expect(contexts[2].endpoints('api.foo.svc.cluster.local', 80).map((e) => e.address)).to.deep.equal(['10.0.0.2']);

    store.applyBatch([{ sourceId: 'svc', resources: [service(81)] }]);
    await waitFor(() => pushes.length === 3);
    const third = sidecarScope(contexts[3], proxyOf('10.0.0.9', 'foo'));
    expect(third).to.not.equal(first);
    expect(third.ports.map((p) => p.number)).to.deep.equal([81]);
  });
});

async function waitFor(condition: () => boolean, ms = 3000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 5));
  }
}

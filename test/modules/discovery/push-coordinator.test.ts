import { expect } from 'chai';
import { MemoryConfigStore } from '../../../src/modules/config/memory-store';
import { ConfigResource } from '../../../src/modules/config/resource';
import { PushCoordinator, PushCoordinatorOptions, PushPipelineObserver } from '../../../src/modules/discovery/push-coordinator';
import { Logging } from '../../../src/modules/logging';
import { defaultLoggingOptions } from '../../../src/modules/logging/options';

/** When a change reaches the push target, with the real debounce (PILOT_DEBOUNCE_AFTER). */
describe('push coordinator: debounce of config changes', () => {
  const stops: Array<() => void> = [];
  afterEach(() => stops.splice(0).forEach((stop) => stop()));

  function coordinator(debounceAfterMs: number): { store: MemoryConfigStore; pushes: number[]; debounced: number[] } {
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
    c.start(() => pushes.push(Date.now()));
    stops.push(() => c.stop());
    return { store, pushes, debounced };
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
});

import { expect } from 'chai';
import { ConfigChange, ConfigConflict, ConfigResource, MemoryConfigStore } from '../../../src/modules/config';

function we(namespace: string, name: string, address = '10.0.0.1'): ConfigResource {
  return { apiVersion: 'networking.mesh.io/v1', kind: 'WorkloadEntry', metadata: { name, namespace, labels: {}, annotations: {} }, spec: { address } };
}

function se(namespace: string, name: string): ConfigResource {
  return { apiVersion: 'networking.mesh.io/v1', kind: 'ServiceEntry', metadata: { name, namespace, labels: {}, annotations: {} }, spec: { hosts: [`${name}.example.com`] } };
}

/** `type key` per change, to compare event lists in one line. */
const brief = (changes: readonly ConfigChange[]) => changes.map((c) => `${c.type} ${c.key}`);

function recording(store: MemoryConfigStore): string[][] {
  const events: string[][] = [];
  store.onChange((changes) => events.push(brief(changes)));
  return events;
}

describe('config: memory store', () => {
  it('reports added, updated and deleted keys once per batch, and nothing for unchanged content', () => {
    const store = new MemoryConfigStore();
    const events = recording(store);
    store.replaceSource('a.yaml', [we('foo', 'w1'), we('foo', 'w2'), se('foo', 's')]);
    store.replaceSource('a.yaml', [we('foo', 'w1'), we('foo', 'w2', '10.0.0.2')]);
    // Equal content in new objects, as a re-parsed file gives: no event at all.
    store.replaceSource('a.yaml', [we('foo', 'w1'), we('foo', 'w2', '10.0.0.2')]);
    store.removeSource('a.yaml');
    expect(events).to.deep.equal([
      ['added ServiceEntry/foo/s', 'added WorkloadEntry/foo/w1', 'added WorkloadEntry/foo/w2'],
      ['deleted ServiceEntry/foo/s', 'updated WorkloadEntry/foo/w2'],
      ['deleted WorkloadEntry/foo/w1', 'deleted WorkloadEntry/foo/w2'],
    ]);
    expect(store.snapshot().size).to.equal(0);
  });

  it('keeps each kind sorted by namespace/name in a new snapshot per change, leaving old ones intact', () => {
    const store = new MemoryConfigStore();
    store.replaceSource('a', [we('foo', 'b'), we('bar', 'z'), we('foo', 'a'), se('foo', 's')]);
    const first = store.snapshot();
    expect(first.get('WorkloadEntry')!.map((r) => `${r.metadata.namespace}/${r.metadata.name}`)).to.deep.equal(['bar/z', 'foo/a', 'foo/b']);
    expect(store.snapshot()).to.equal(first, 'no change, same snapshot');

    store.replaceSource('b', [we('foo', 'c')]);
    const second = store.snapshot();
    expect(second).to.not.equal(first);
    expect(first.get('WorkloadEntry')).to.have.length(3);
    expect(second.get('WorkloadEntry')).to.have.length(4);
    // A kind that did not change keeps its list.
    expect(second.get('ServiceEntry')).to.equal(first.get('ServiceEntry'));
    expect(Object.isFrozen(second.get('WorkloadEntry'))).to.equal(true);
  });

  it('applies several parts as one batch with one notification', () => {
    const store = new MemoryConfigStore();
    store.replaceSource('a', [we('foo', 'a')]);
    const events = recording(store);
    const changes = store.applyBatch([
      { sourceId: 'a', resources: null },
      { sourceId: 'b', resources: [we('foo', 'b')] },
    ]);
    expect(brief(changes)).to.deep.equal(['deleted WorkloadEntry/foo/a', 'added WorkloadEntry/foo/b']);
    expect(events).to.have.length(1);
    expect(store.applyBatch([{ sourceId: 'b', resources: [we('foo', 'b')] }])).to.deep.equal([]);
    expect(events).to.have.length(1);
  });

  it('serves the first sourceId of a conflict whatever the order, reports it, and falls back when the winner goes', () => {
    const conflicts: ConfigConflict[] = [];
    const store = new MemoryConfigStore({ onConflict: (c) => conflicts.push(c) });
    const events = recording(store);
    store.replaceSource('z.yaml', [we('foo', 'w', '10.0.0.9')]);
    store.replaceSource('a.yaml', [we('foo', 'w', '10.0.0.1')]);
    expect(store.snapshot().get('WorkloadEntry')![0].spec).to.deep.equal({ address: '10.0.0.1' });
    expect(store.ownerOf('WorkloadEntry/foo/w')).to.equal('a.yaml');
    expect(conflicts).to.deep.equal([{ key: 'WorkloadEntry/foo/w', winner: 'a.yaml', ignored: ['z.yaml'] }]);

    // A change to the ignored copy is not served, so it is not an event either.
    store.replaceSource('z.yaml', [we('foo', 'w', '10.0.0.8')]);
    store.removeSource('a.yaml');
    expect(store.snapshot().get('WorkloadEntry')![0].spec).to.deep.equal({ address: '10.0.0.8' });
    expect(events).to.deep.equal([['added WorkloadEntry/foo/w'], ['updated WorkloadEntry/foo/w'], ['updated WorkloadEntry/foo/w']]);
  });

  it('keeps the first of two documents with the same key in one part and reports it', () => {
    const conflicts: ConfigConflict[] = [];
    const store = new MemoryConfigStore({ onConflict: (c) => conflicts.push(c) });
    store.replaceSource('a', [we('foo', 'w', '10.0.0.1'), we('foo', 'w', '10.0.0.2')]);
    expect(store.snapshot().get('WorkloadEntry')!.map((r) => r.spec)).to.deep.equal([{ address: '10.0.0.1' }]);
    expect(conflicts).to.deep.equal([{ key: 'WorkloadEntry/foo/w', winner: 'a', ignored: ['a'] }]);
  });

  it('unsubscribes, and a failing listener does not stop the others', () => {
    const logged: string[] = [];
    const store = new MemoryConfigStore({ logger: { warn: () => undefined, error: (m) => logged.push(m) } });
    const seen: number[] = [];
    store.onChange(() => {
      throw new Error('boom');
    });
    const off = store.onChange((c) => seen.push(c.length));
    store.replaceSource('a', [we('foo', 'a')]);
    off();
    store.replaceSource('a', [we('foo', 'b')]);
    expect(seen).to.deep.equal([1]);
    expect(logged).to.deep.equal(['config change listener failed', 'config change listener failed']);
  });
});

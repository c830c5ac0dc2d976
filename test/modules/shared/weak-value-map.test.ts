import { expect } from 'chai';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { WeakValueMap } from '../../../src/modules/shared/weak-value-map';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const nextTask = () => new Promise((resolve) => setImmediate(resolve));

/** The weakly held tables (interned sets, name indexes, decoded name lists) rest on this. */
describe('WeakValueMap', () => {
  it('gives back the value set while something holds it, and a newer value for the same key', async () => {
    const map = new WeakValueMap<string, { n: number }>();
    const first = { n: 1 };
    map.set('a', first);
    expect(map.get('a')).to.equal(first);
    const second = { n: 2 };
    map.set('a', second);
    await nextTask();
    gc();
    // The first value's collection must not remove the entry that now holds the second.
    for (let i = 0; i < 5; i++) await nextTask();
    expect(map.get('a')).to.equal(second);
    expect(map.get('b')).to.equal(undefined);
  });

  it('forgets an entry once nothing else holds its value', async () => {
    const map = new WeakValueMap<string, object>();
    const kept = {};
    map.set('kept', kept);
    (() => map.set('dropped', {}))();
    await nextTask(); // a WeakRef keeps its target until the end of the job that made it
    gc();
    expect(map.get('dropped')).to.equal(undefined);
    for (let i = 0; i < 50 && map.size > 1; i++) {
      await nextTask();
      gc();
    }
    expect(map.size).to.equal(1);
    expect(map.get('kept')).to.equal(kept);
  });
});

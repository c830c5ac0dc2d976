import { expect } from 'chai';
import { Fifo } from '../../../src/modules/shared/fifo';

describe('shared: Fifo', () => {
  it('gives items back in the order they came, through growth and compaction', () => {
    const fifo = new Fifo<number>();
    expect(fifo.shift()).to.equal(undefined);
    expect(fifo.peek()).to.equal(undefined);
    const out: number[] = [];
    let next = 0;
    // Take fewer than are added, many times over: the front moves far past the compaction threshold.
    for (let round = 0; round < 50; round++) {
      for (let i = 0; i < 100; i++) fifo.push(next++);
      for (let i = 0; i < 90; i++) out.push(fifo.shift()!);
    }
    expect(fifo.size).to.equal(500);
    expect(fifo.peek()).to.equal(4500);
    while (fifo.size > 0) out.push(fifo.shift()!);
    expect(out).to.deep.equal(Array.from({ length: 5000 }, (_, i) => i));
    fifo.push(7);
    expect([fifo.size, fifo.peek(), fifo.shift(), fifo.size]).to.deep.equal([1, 7, 7, 0]);
  });
});

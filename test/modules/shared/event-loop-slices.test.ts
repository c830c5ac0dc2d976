import { expect } from 'chai';
import { EventLoopSlices } from '../../../src/modules/shared/event-loop-slices';
import { countEventLoopTurns } from '../../helpers/event-loop-turns';

describe('shared: EventLoopSlices', () => {
  const busy = (ms: number) => {
    const until = performance.now() + ms;
    while (performance.now() < until);
  };

  /** Runs `piece` when the slices let it: at once, or in its turn. */
  const inTurn = (slices: EventLoopSlices, piece: () => void): Promise<void> => {
    const turn = slices.due();
    if (!turn) {
      piece();
      return Promise.resolve();
    }
    return turn.then(piece);
  };

  it('lets waiting pieces go one at a time, in arrival order, each after the one before ran', async () => {
    const slices = new EventLoopSlices(5);
    await slices.due(); // a fresh slice
    const ran: number[] = [];
    const turns: number[] = [];
    const counter = countEventLoopTurns();
    // 1 ms each: a 5 ms slice runs about five, then the next turn of the event loop comes.
    await Promise.all(Array.from({ length: 30 }, (_, i) => inTurn(slices, () => {
      ran.push(i);
      turns.push(counter.count);
      busy(1);
    })));
    counter.stop();
    expect(ran).to.deep.equal(Array.from({ length: 30 }, (_, i) => i));
    const perTurn = new Map<number, number>();
    for (const t of turns) perTurn.set(t, (perTurn.get(t) ?? 0) + 1);
    expect(perTurn.size, 'the pieces were spread over several turns').to.be.at.least(4);
    expect(Math.max(...perTurn.values()), 'none ran more than about a slice').to.be.at.most(7);
    expect(slices.waiters).to.equal(0);
  });

  it('runs a piece at once while the slice has time and nobody waits, and queues one behind waiters', async () => {
    const slices = new EventLoopSlices(1000);
    await slices.due();
    expect(slices.due(), 'time left, nobody waiting').to.equal(undefined);
    const stale = new EventLoopSlices(0);
    const first = stale.due();
    expect(first).to.be.instanceOf(Promise);
    expect(stale.waiters).to.equal(1);
    await first;
    expect(stale.waiters).to.equal(0);
  });
});

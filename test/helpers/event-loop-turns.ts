/** Turns of the event loop counted so far, and stopping the count. */
export interface EventLoopTurns {
  readonly count: number;
  /** Stops counting; returns the count. */
  stop(): number;
}

/**
 * Counts turns of the event loop from now on (a setImmediate that schedules itself): work
 * that keeps the loop from turning shows as few turns.
 */
export function countEventLoopTurns(): EventLoopTurns {
  let turns = 0;
  let counting = true;
  const count = () => {
    if (!counting) return;
    turns += 1;
    setImmediate(count);
  };
  setImmediate(count);
  return {
    get count() {
      return turns;
    },
    stop: () => {
      counting = false;
      return turns;
    },
  };
}

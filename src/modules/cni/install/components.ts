import type { ScopedLogger } from '../../logging';

/**
 * A long-running part of `install-cni` (the installer, the metrics server, the race-repair
 * controller): started in order, stopped in reverse on SIGTERM/SIGINT.
 */
export interface NodeComponent {
  readonly name: string;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Starts the components in order. When one fails, those already started are stopped (in
 * reverse) and its error is rethrown.
 */
export async function startComponents(components: readonly NodeComponent[], log: ScopedLogger): Promise<void> {
  const started: NodeComponent[] = [];
  for (const component of components) {
    try {
      await component.start();
    } catch (err) {
      await stopComponents(started, log);
      throw err;
    }
    started.push(component);
  }
}

/** Stops the components in reverse order; one that fails to stop is logged and the others still stop. */
export async function stopComponents(components: readonly NodeComponent[], log: ScopedLogger): Promise<void> {
  for (const component of [...components].reverse()) {
    try {
      await component.stop();
    } catch (err) {
      log.error(`stopping the ${component.name}: ${(err as Error).message}`);
    }
  }
}

/** Resolves with the first SIGTERM or SIGINT the process receives. */
export function waitForStopSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const onSignal = (signal: NodeJS.Signals) => {
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
      resolve(signal);
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  });
}

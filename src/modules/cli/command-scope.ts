import type { interfaces } from 'inversify';

/**
 * How a command hands what it parsed to the services it runs: `resolve(DaemonToken,
 * [[DaemonFlagsToken, flags]])` resolves the daemon in a scope where its flags are bound.
 * Implemented by src/container.ts, the one place that looks things up in the container.
 */
export const CommandScope = Symbol.for('mesh.CommandScope');
export interface CommandScope {
  resolve<T>(token: interfaces.ServiceIdentifier<T>, values?: Iterable<readonly [interfaces.ServiceIdentifier<unknown>, unknown]>): T;
}

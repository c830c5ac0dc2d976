import { interfaces } from 'inversify';
import { PLUGIN_PHASES, pluginMetadata, PluginPhase } from './decorator';

/**
 * A contribution point's contributions, in declared order (Theia's ContributionProvider): the
 * consumer injects `@inject(ContributionProvider) @named(<point token>)` and asks when it needs
 * them, so an unused point never instantiates its contributors.
 */
export const ContributionProvider = Symbol.for('mesh.ContributionProvider');
export interface ContributionProvider<T> {
  /** Every contribution bound to the point, ordered by the phase of the plugin that made it, then by binding order. */
  getContributions(): readonly T[];
}

/** The contribution points areas declare; src/container.ts binds one provider per point. */
export const ContributionPointToken = Symbol.for('mesh.ContributionPoint');

/** Declares a contribution point in an area's ContainerModule. */
export function declareContributionPoint(bind: interfaces.Bind, point: symbol): void {
  bind(ContributionPointToken).toConstantValue(point);
}

/** The phase a contribution runs in: that of its plugin, `default` for the mesh's own classes. */
export function phaseOf(contribution: unknown): PluginPhase {
  const ctor = (contribution as { constructor?: unknown } | undefined)?.constructor;
  return pluginMetadata(ctor)?.phase ?? 'default';
}

/** Orders contributions by phase; the sort is stable, so binding order decides within a phase. */
export function orderByPhase<T>(contributions: readonly T[]): T[] {
  const rank = (c: T) => PLUGIN_PHASES.indexOf(phaseOf(c));
  return contributions
    .map((c, i) => ({ c, i, r: rank(c) }))
    .sort((a, b) => a.r - b.r || a.i - b.i)
    .map((x) => x.c);
}

/** The provider src/container.ts binds for a point; `resolve` is the container's lookup of the point. */
export class OrderedContributionProvider<T> implements ContributionProvider<T> {
  private cached: readonly T[] | undefined;

  constructor(private readonly resolve: () => T[]) {}

  getContributions(): readonly T[] {
    this.cached ??= Object.freeze(orderByPhase(this.resolve()));
    return this.cached;
  }
}

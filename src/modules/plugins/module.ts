import { ContainerModule } from 'inversify';
import { declareContributionPoint } from './contribution-provider';
import { ProtoContribution, ProtoRegistry } from './proto-registry';
import { PluginStatus, PluginStatusToken } from './resolution';

/**
 * The plugin framework's own bindings: the plugin list and the protos point. The enabled
 * plugins' parts are bound to their points by src/container.ts.
 */
export function pluginsModule(statuses: PluginStatus[]): ContainerModule {
  return new ContainerModule((bind) => {
    declareContributionPoint(bind, ProtoContribution);
    bind(ProtoRegistry).toSelf().inSingletonScope();
    for (const status of statuses) {
      bind(PluginStatusToken).toConstantValue(status);
    }
  });
}

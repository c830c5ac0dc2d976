import { ContainerModule } from 'inversify';
import { declareContributionPoint } from './contribution-provider';
import { pluginMetadata } from './decorator';
import { ProtoContribution, ProtoRegistry } from './proto-registry';
import { PluginStatus, PluginStatusToken } from './resolution';

/** Binds each part of each enabled plugin once (singleton) and to every contribution point it provides. */
export function pluginsModule(statuses: PluginStatus[]): ContainerModule {
  return new ContainerModule((bind) => {
    declareContributionPoint(bind, ProtoContribution);
    bind(ProtoRegistry).toSelf().inSingletonScope();
    for (const status of statuses) {
      bind(PluginStatusToken).toConstantValue(status);
      if (!status.enabled) continue;
      for (const cls of status.classes) {
        bind(cls).toSelf().inSingletonScope();
        for (const token of pluginMetadata(cls)!.provides) bind(token).toService(cls);
      }
    }
  });
}

import { ContainerModule } from 'inversify';
import { PluginStatus, PluginStatusToken } from './resolution';

/** Binds each enabled plugin once (singleton) and to every contribution point it provides. */
export function pluginsModule(statuses: PluginStatus[]): ContainerModule {
  return new ContainerModule((bind) => {
    for (const status of statuses) {
      bind(PluginStatusToken).toConstantValue(status);
      if (!status.enabled) continue;
      bind(status.cls).toSelf().inSingletonScope();
      for (const token of status.options.provides) bind(token).toService(status.cls);
    }
  });
}

import { ContainerModule } from 'inversify';
import { Environment } from './environment';
import { Settings, SettingsToken } from './settings';

/** Settings are parsed before the container exists (a bad value stops start-up), then bound. */
export function settingsModule(settings: Settings, env: Environment): ContainerModule {
  return new ContainerModule((bind) => {
    bind(SettingsToken).toConstantValue(settings);
    bind(Environment).toConstantValue(env);
  });
}

import 'reflect-metadata';
import { Container, interfaces } from 'inversify';
import { CommandScope } from './modules/cli/command-scope';
import { BUILT_IN_PLUGINS } from './plugins';
import { buildInfoModule } from './modules/build-info';
import { configModule } from './modules/config';
import { discoveryModule } from './modules/discovery';
import { generatorsModule } from './modules/generators';
import { loggingModule } from './modules/logging';
import { meshConfigModule } from './modules/mesh-config';
import { monitoringModule } from './modules/monitoring';
import {
  ContributionPointToken,
  ContributionProvider,
  loadPluginModules,
  OrderedContributionProvider,
  PluginStatus,
  pluginsModule,
  resolvePlugins,
} from './modules/plugins';
import { registryModule } from './modules/registry';
import { securityModule } from './modules/security';
import { Environment, Settings, settingsModule } from './modules/settings';
import { Program } from './modules/settings/types';

export interface ContainerOptions {
  program: Program;
  env: Environment;
  /** Where MESH_PLUGINS package names and relative paths are resolved from. */
  cwd: string;
}

export interface MeshContainer {
  container: Container;
  settings: Settings;
  plugins: PluginStatus[];
}

/**
 * Composes the program's container: one ContainerModule per area, then the plugins whose
 * enabling setting is on. Throws SettingValueError or PluginLoadError when start-up must stop.
 */
export function createContainer(options: ContainerOptions): MeshContainer {
  const settings = new Settings(options.program, options.env);
  const thirdParty = loadPluginModules(settings.string('MESH_PLUGINS'), options.cwd);
  for (const mod of thirdParty) settings.extend(mod.settings);
  const plugins = resolvePlugins(settings, [
    ...BUILT_IN_PLUGINS.map((cls) => ({ cls, source: 'built-in' })),
    ...thirdParty.flatMap((mod) => mod.classes.map((cls) => ({ cls, source: mod.spec }))),
  ]);

  const container = new Container({ defaultScope: 'Singleton' });
  container.load(
    settingsModule(settings, options.env),
    loggingModule(options.program),
    buildInfoModule(),
    configModule(),
    meshConfigModule(),
    monitoringModule(),
    registryModule(),
    securityModule(),
    generatorsModule(),
    discoveryModule(),
    pluginsModule(plugins),
  );
  bindContributionProviders(container);
  container.bind(CommandScope).toConstantValue(commandScope(container));
  return { container, settings, plugins };
}

/** Resolves a service in a child container holding a command's parsed values (its flags). */
function commandScope(container: Container): CommandScope {
  return {
    resolve<T>(token: interfaces.ServiceIdentifier<T>, values: Iterable<readonly [interfaces.ServiceIdentifier<unknown>, unknown]> = []): T {
      const scope = container.createChild();
      for (const [id, value] of values) scope.bind(id).toConstantValue(value);
      return scope.get<T>(token);
    },
  };
}

/**
 * One ContributionProvider per contribution point the areas declared, injected as
 * `@inject(ContributionProvider) @named(<point>)`. This is the only place contributions are
 * looked up in the container; a point nothing contributes to gives an empty list. They are
 * looked up from the container the request started in, so contributors resolved for a command
 * see the values of its scope (the daemon's flags, its mesh config file) like everything else.
 */
function bindContributionProviders(container: Container): void {
  const points = container.isBound(ContributionPointToken) ? container.getAll<symbol>(ContributionPointToken) : [];
  for (const point of new Set(points)) {
    container
      .bind(ContributionProvider)
      .toDynamicValue(({ container: from }) => new OrderedContributionProvider(() => (from.isBound(point) ? from.getAll(point) : [])))
      .inSingletonScope()
      .whenTargetNamed(point);
  }
}

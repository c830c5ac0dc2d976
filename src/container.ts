import 'reflect-metadata';
import { Container, interfaces } from 'inversify';
import type { Command, Config } from '@oclif/core';
import { agentModule } from './modules/agent/module';
import { analyzeModule } from './modules/analyze';
import { authzSimModule } from './modules/authz-sim';
import { cliModule } from './modules/cli/module';
import { cniModule } from './modules/cni/module';
import { iptablesModule } from './modules/iptables/module';
import { xdsModule } from './modules/xds/module';
import { debugModule } from './modules/debug/module';
import { ctrlzModule } from './modules/ctrlz/module';
import { CommandArgv, CommandFactory, CommandTreeToken, OclifConfig } from './modules/cli/command-injection';
import { CommandScope } from './modules/cli/command-scope';
import type { CommandTree } from './modules/cli/command-tree';
import { CommandContribution } from './modules/cli/contributions';
import { BUILT_IN_PLUGINS } from './plugins';
import { buildInfoModule } from './modules/build-info';
import { configModule } from './modules/config';
import { diagnoseModule } from './modules/diagnose';
import { revisionTagsModule } from './modules/revision-tags';
import { waypointModule } from './modules/waypoint';
import { discoveryModule } from './modules/discovery';
import { generatorsModule } from './modules/generators';
import { leaderElectionModule } from './modules/leader-election';
import { loggingModule } from './modules/logging';
import { meshConfigModule } from './modules/mesh-config';
import { injectModule } from './modules/inject';
import { monitoringModule } from './modules/monitoring';
import { orchModule } from './modules/orch';
import { orchAccessModule } from './modules/orch-access';
import {
  ContributionPointToken,
  ContributionProvider,
  loadPluginModules,
  OrderedContributionProvider,
  PluginLoadError,
  pluginMetadata,
  PluginStatus,
  pluginsModule,
  ProtoRegistry,
  resolvePlugins,
} from './modules/plugins';
import { proxyModule } from './modules/proxy/module';
import { registryModule } from './modules/registry';
import { securityModule } from './modules/security';
import { webhookModule } from './modules/webhook';
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
  /** How the program runner builds commands with their injected services. */
  commands: CommandFactory;
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

  // skipBaseClassChecks: commands extend oclif's Command, which is not @injectable.
  const container = new Container({ defaultScope: 'Singleton', skipBaseClassChecks: true });
  container.load(
    settingsModule(settings, options.env),
    loggingModule(options.program),
    buildInfoModule(),
    configModule(),
    proxyModule(),
    agentModule(),
    meshConfigModule(),
    injectModule(),
    monitoringModule(),
    orchModule(),
    orchAccessModule(),
    registryModule(),
    securityModule(),
    generatorsModule(),
    xdsModule(),
    debugModule(),
    ctrlzModule(),
    leaderElectionModule(),
    webhookModule(),
    discoveryModule(),
    diagnoseModule(),
    revisionTagsModule(),
    waypointModule(),
    analyzeModule(),
    authzSimModule(),
    pluginsModule(plugins),
    cliModule(),
    cniModule(),
    iptablesModule(),
  );
  bindPluginParts(container, plugins);
  bindContributionProviders(container);
  container.bind(CommandScope).toConstantValue(commandScope(container));
  // Every program registers the enabled plugins' protos at start, before any xDS is encoded or
  // decoded (the daemon encodes their typed_config, the agent decodes it). Cheap: parsing waits
  // for the first use of the protobuf root.
  container.get(ProtoRegistry).load();
  return { container, settings, plugins, commands: commandFactory(container) };
}

/** Builds each command in a scope holding what oclif passes its constructor and the program's tree. */
function commandFactory(container: Container): CommandFactory {
  return {
    contributedCommands: () =>
      container
        .getNamed<ContributionProvider<CommandContribution>>(ContributionProvider, CommandContribution)
        .getContributions()
        .flatMap((c) => c.commands()),
    create<T>(cls: Command.Class, argv: string[], config: Config, tree: CommandTree): T {
      const scope = container.createChild();
      scope.bind(CommandArgv).toConstantValue(argv);
      scope.bind(OclifConfig).toConstantValue(config);
      scope.bind(CommandTreeToken).toConstantValue(tree);
      scope.bind(cls).toSelf().inTransientScope();
      return scope.get<T>(cls);
    },
  };
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
 * Each part of each enabled plugin, once (singleton), under every point it provides. Not with
 * inversify's toService: that retries a constructor that throws as an asynchronous resolution,
 * so the user would see "asynchronous dependencies" and the process die of the real error later.
 */
function bindPluginParts(container: Container, plugins: readonly PluginStatus[]): void {
  for (const status of plugins.filter((p) => p.enabled)) {
    for (const cls of status.classes) {
      container.bind(cls).toSelf().inSingletonScope();
      for (const point of pluginMetadata(cls)!.provides) {
        container.bind(point).toDynamicValue(({ container: from }) => {
          try {
            return from.get(cls);
          } catch (err) {
            if (err instanceof PluginLoadError) throw err;
            const where = status.source === 'built-in' ? `built-in plugin "${status.name}"` : `plugin "${status.name}" from "${status.source}"`;
            throw new PluginLoadError(`${where}: ${cls.name} could not be created: ${(err as Error).message}`);
          }
        });
      }
    }
  }
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

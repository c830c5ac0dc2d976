/**
 * `install-cni` on a node: the installer, its metrics endpoint and, when enabled, the race-repair
 * controller, started and stopped together. Resolved from the container with the command's
 * flags bound (InstallCniFlagsToken); options come from flags and settings here, not in the command.
 */
import * as path from 'node:path';
import { inject, injectable } from 'inversify';
import { BuildInfo, BuildInfoToken } from '../../build-info';
import { Logging, LoggingToken, ScopedLogger } from '../../logging';
import { loadOrchConfig } from '../../orch';
import { Settings, SettingsToken } from '../../settings';
import { UserError } from '../../shared/user-error';
import { CniMetrics } from '../metrics';
import { CNI_PLUGIN_MAIN, PLUGIN_ORCHCONFIG_FILE } from '../plugin-location';
import { RepairController } from '../repair';
import { NodeComponent, startComponents, stopComponents } from './components';
import { CniInstaller } from './installer';
import { MetricsEndpoint } from './metrics-component';
import { InstallCniFlagInput, InstallCniOptions, resolveInstallCniOptions } from './options';
import { readPluginTemplate, renderPluginConfig } from './plugin-config';
import { buildPluginOrchConfig } from './plugin-orchconfig';

export const InstallCniFlagsToken = Symbol.for('mesh.cni.InstallCniFlags');

@injectable()
export class InstallCniNode {
  private readonly components: NodeComponent[] = [];
  private readonly log: ScopedLogger;

  constructor(
    @inject(InstallCniFlagsToken) private readonly flags: InstallCniFlagInput,
    @inject(SettingsToken) private readonly settings: Settings,
    @inject(LoggingToken) private readonly logging: Logging,
    @inject(BuildInfoToken) private readonly build: BuildInfo,
  ) {
    this.log = logging.scope('cni-agent');
  }

  /** Starts every component; a problem the operator can fix (a file, a directory) is a UserError. */
  async start(): Promise<void> {
    const options = resolveInstallCniOptions(this.flags, this.settings);
    const metrics = new CniMetrics({ version: this.build.version });
    this.components.push(this.installer(options, metrics), new MetricsEndpoint(options.monitoringPort, metrics, this.logging.scope('monitoring')));
    if (options.repair.enabled) this.components.push(this.repairController(options, metrics));
    try {
      await startComponents(this.components, this.log);
    } catch (err) {
      // A missing or unwritable directory on the node: the message names the path.
      if ((err as NodeJS.ErrnoException).code && !(err instanceof UserError)) throw new UserError((err as Error).message);
      throw err;
    }
  }

  stop(): Promise<void> {
    return stopComponents(this.components, this.log);
  }

  /** Race repair: watches the node's pods and labels or deletes those whose validation init container failed. */
  private repairController(options: InstallCniOptions, metrics: CniMetrics): NodeComponent {
    let controller: RepairController | undefined;
    const log = this.logging.scope('controllers');
    return {
      name: 'race-repair controller',
      // Started after the installer, which reports an unusable ORCHCONFIG first and by name.
      start: () => {
        const sink = { countRepaired: (type: 'label' | 'delete') => metrics.repairPodsRepairedTotal.inc({ type }) };
        controller = new RepairController(options.repair, loadOrchConfig(options.orchConfigPath || undefined), sink, log);
        return controller.start();
      },
      stop: async () => controller?.stop(),
    };
  }

  private installer(options: InstallCniOptions, metrics: CniMetrics): CniInstaller {
    const orchConfigFile = path.join(options.cniAgentRunDir, PLUGIN_ORCHCONFIG_FILE);
    const pluginConfig = renderPluginConfig(readPluginTemplate(options), {
      logLevel: options.logLevel,
      cniAgentRunDir: options.cniAgentRunDir,
      podNamespace: options.podNamespace,
      nodeName: options.nodeName,
      orchConfigFile,
      ambientEnabled: options.ambientEnabled,
    });
    return new CniInstaller({
      mountedCniNetDir: options.mountedCniNetDir,
      mountedCniBinDir: options.mountedCniBinDir,
      cniAgentRunDir: options.cniAgentRunDir,
      cniConfName: options.cniConfName,
      cniConfNameSource: options.sources['cni-conf-name'],
      chainedCniPlugin: options.chainedCniPlugin,
      pluginConfig,
      orchConfig: () =>
        buildPluginOrchConfig({
          orchConfigPath: options.orchConfigPath,
          orchCaFile: options.orchCaFile,
          orchCaFileSource: options.sources['orch-ca-file'],
          skipTlsVerify: options.skipTlsVerify,
        }),
      orchConfigMode: options.orchConfigMode,
      pluginMain: CNI_PLUGIN_MAIN,
      log: this.log,
      metrics,
    });
  }
}

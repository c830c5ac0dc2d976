import * as path from 'node:path';
import { Flags } from '@oclif/core';
import { command, intFlag, MeshCommand, stringFlag, uint16Flag } from '../../src/modules/cli';
import { BuildInfo, BuildInfoToken } from '../../src/modules/build-info';
import { CniMetrics } from '../../src/modules/cni/metrics';
import { CNI_PLUGIN_MAIN, PLUGIN_ORCHCONFIG_FILE } from '../../src/modules/cni/plugin-location';
import {
  buildPluginOrchConfig,
  CniConfigError,
  CniInstaller,
  InstallCniOptions,
  InstallOptionsError,
  MetricsEndpoint,
  NodeComponent,
  readPluginTemplate,
  renderPluginConfig,
  resolveInstallCniOptions,
  startComponents,
  stopComponents,
  waitForStopSignal,
} from '../../src/modules/cni/install';
import { Logging, LoggingToken } from '../../src/modules/logging';
import { loadOrchConfig, OrchConfigError } from '../../src/modules/orch';
import { RepairController, RepairOptionsError } from '../../src/modules/cni/repair';
import { Settings, SettingsToken } from '../../src/modules/settings';

/**
 * A switch that falls back to a setting: `--x=false` must count as given (so it beats the
 * setting), hence `--no-x` is accepted for every one, not only for those defaulting to true.
 */
function boolFlag(description: string, opts: { default?: boolean } = {}) {
  return Flags.boolean({ description, allowNo: true, default: opts.default ?? false });
}

/**
 * Flags of `install-cni` (spec/02). Each has a matching setting (same table, see
 * INSTALL_CNI_FLAG_SETTINGS): the setting supplies the value when the flag is not given.
 */
export const installCniFlags = {
  'ambient-enabled': boolFlag('whether the ambient controller is enabled'),
  'chained-cni-plugin': boolFlag('whether to install the CNI plugin as a chained or standalone plugin', { default: true }),
  'cni-agent-run-dir': stringFlag('location of the node agent writable path (sockets etc.)', { default: '/var/run/mesh-cni' }),
  'cni-conf-name': stringFlag('name of the CNI configuration file', { default: '' }),
  'cni-network-config': stringFlag('CNI configuration template as a string', { default: '' }),
  'cni-network-config-file': stringFlag('CNI configuration template as a file', { default: '' }),
  ctrlz_address: stringFlag('IP address to listen on for the introspection facility; use "*" for all addresses', { default: 'localhost' }),
  ctrlz_port: uint16Flag('IP port to use for the introspection facility', { default: 9876 }),
  'orch-ca-file': stringFlag("CA file for the orchestrator config file; defaults to the installer pod's own", { default: '' }),
  'orchconfig-mode': intFlag('file mode of the orchestrator config file', { default: 384 }),
  'log-level': stringFlag('fallback log level in the CNI config when the template does not set one', { default: 'warn' }),
  'monitoring-port': intFlag('HTTP port to serve metrics on', { default: 15014 }),
  'mounted-cni-net-dir': stringFlag('directory on the container where CNI networks are installed', { default: '/host/etc/cni/net.d' }),
  'repair-broken-pod-label-key': stringFlag('key of the label set on pods found broken, when labelling', {
    default: 'cni.mesh.io/uninitialized',
  }),
  'repair-broken-pod-label-value': stringFlag('value of the label set on pods found broken', { default: 'true' }),
  'repair-delete-pods': boolFlag('delete pods found broken by the install race'),
  'repair-enabled': boolFlag('whether to enable race condition repair', { default: true }),
  'repair-field-selectors': stringFlag('field selectors (label=value) added to the pod listing', { default: '' }),
  'repair-init-container-exit-code': intFlag('expected exit code of the init container when crash-looping from CNI misconfiguration', {
    default: 126,
  }),
  'repair-init-container-name': stringFlag('name of the init container that crash-loops when CNI is not configured', {
    default: 'mesh-validation',
  }),
  'repair-init-container-termination-message': stringFlag('expected termination message of that init container', { default: '' }),
  'repair-label-pods': boolFlag('label pods found broken by the install race'),
  'repair-label-selectors': stringFlag('label selectors (label=value) added to the pod listing', { default: '' }),
  'repair-node-name': stringFlag('node to manage; all nodes when unset', { default: '' }),
  'repair-sidecar-annotation': stringFlag('pods without this annotation are ignored; its value is ignored', {
    default: 'sidecar.mesh.io/status',
  }),
  'skip-tls-verify': boolFlag('use insecure TLS in the orchestrator config file'),
  'ztunnel-uds-address': stringFlag('address of the Unix socket server ztunnel connects to', {
    default: '/var/run/ztunnel/ztunnel.sock',
  }),
};

@command({
  program: 'install-cni',
  path: '',
  summary: 'Installs and configures the mesh network plugin on the node, and repairs pods broken by the install race',
  flags: installCniFlags,
})
export class InstallCni extends MeshCommand {
  async run(): Promise<void> {
    const { flags, metadata } = await this.parse(InstallCni);
    const settings = this.container.get<Settings>(SettingsToken);
    const logging = this.container.get<Logging>(LoggingToken);
    const log = logging.scope('cni-agent');
    // Flags oclif filled in from their defaults were not given: their settings decide.
    const given = new Set(Object.keys(flags).filter((name) => !metadata.flags[name]?.setFromDefault));
    const components: NodeComponent[] = [];
    // Listening from the start: a signal during start-up still ends in an orderly uninstall.
    const stopSignal = waitForStopSignal();
    try {
      const options = resolveInstallCniOptions({ values: flags, given }, settings);
      const metrics = new CniMetrics({ version: this.container.get<BuildInfo>(BuildInfoToken).version });
      components.push(this.installer(options, metrics, log), new MetricsEndpoint(options.monitoringPort, metrics, logging.scope('monitoring')));
      if (options.repair.enabled) components.push(this.repairController(options, metrics, logging.scope('controllers')));
      await startComponents(components, log);
    } catch (err) {
      if (
        err instanceof InstallOptionsError ||
        err instanceof RepairOptionsError ||
        err instanceof CniConfigError ||
        err instanceof OrchConfigError ||
        (err as NodeJS.ErrnoException).code
      ) {
        this.fail((err as Error).message);
      }
      throw err;
    }
    const signal = await stopSignal;
    log.info(`received ${signal}, uninstalling the mesh CNI plug-in`);
    await stopComponents(components, log);
  }

  /** Race repair: watches the node's pods and labels or deletes those whose validation init container failed. */
  private repairController(options: InstallCniOptions, metrics: CniMetrics, log: ReturnType<Logging['scope']>): NodeComponent {
    let controller: RepairController | undefined;
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

  private installer(options: InstallCniOptions, metrics: CniMetrics, log: ReturnType<Logging['scope']>): CniInstaller {
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
      log,
      metrics,
    });
  }
}

import { Flags } from '@oclif/core';
import { command, givenFlags, intFlag, MeshCommand, stringFlag, uint16Flag } from '../../src/modules/cli';
import { waitForStopSignal } from '../../src/modules/cni/install';
import { InstallCniFlagsToken, InstallCniNode } from '../../src/modules/cni/install/node-agent';

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
    const log = this.logging.scope('cni-agent');
    // Listening from the start: a signal during start-up still ends in an orderly uninstall.
    const stopSignal = waitForStopSignal();
    const node = this.scope.resolve(InstallCniNode, [[InstallCniFlagsToken, { values: flags, given: givenFlags(flags, metadata) }]]);
    // A failed start has already stopped what it started.
    await node.start();
    const signal = await stopSignal;
    log.info(`received ${signal}, uninstalling the mesh CNI plug-in`);
    await node.stop();
  }
}

import * as path from 'node:path';
import { isLevel, LEVELS } from '../../logging/levels';
import { Settings } from '../../settings';
import { parseRepairOptions, REPAIR_PARAMETERS, RepairOptions } from '../repair';
import { CNI_CONFIG_EXTENSIONS } from './conf-dir';
import { UserError } from '../../shared/user-error';

/** A flag or setting of install-cni with a value that cannot be used; the message names it. */
export class InstallOptionsError extends UserError {
  constructor(message: string) {
    super(message);
  }
}

export interface InstallCniOptions {
  ambientEnabled: boolean;
  chainedCniPlugin: boolean;
  cniAgentRunDir: string;
  /** '' = the highest-priority file of the net dir (chained) or `YY-mesh-cni.conflist` (standalone). */
  cniConfName: string;
  cniNetworkConfig: string;
  cniNetworkConfigFile: string;
  orchCaFile: string;
  /** File mode of the plug-in's orchestrator config (decimal, e.g. 384 = 0600). */
  orchConfigMode: number;
  /** Plug-in log level written to its config when the template does not set one. */
  logLevel: string;
  monitoringPort: number;
  mountedCniNetDir: string;
  mountedCniBinDir: string;
  /** ORCHCONFIG: the installer's own orchestrator config file; '' = in-cluster. */
  orchConfigPath: string;
  podNamespace: string;
  nodeName: string;
  skipTlsVerify: boolean;
  ztunnelUdsAddress: string;
  repair: RepairOptions;
  /** Where each flag's value came from: `--<flag>` when given, else the setting's name. */
  sources: Readonly<Record<InstallCniFlagName, string>>;
}

/** Each flag of spec/02's install-cni table and the setting that supplies it when the flag is not given. */
export const INSTALL_CNI_FLAG_SETTINGS = {
  'ambient-enabled': 'AMBIENT_ENABLED',
  'chained-cni-plugin': 'CHAINED_CNI_PLUGIN',
  'cni-agent-run-dir': 'CNI_AGENT_RUN_DIR',
  'cni-conf-name': 'CNI_CONF_NAME',
  'cni-network-config': 'CNI_NETWORK_CONFIG',
  'cni-network-config-file': 'CNI_NETWORK_CONFIG_FILE',
  'orch-ca-file': 'ORCH_CA_FILE',
  'orchconfig-mode': 'ORCHCONFIG_MODE',
  'log-level': 'LOG_LEVEL',
  'monitoring-port': 'MONITORING_PORT',
  'mounted-cni-net-dir': 'MOUNTED_CNI_NET_DIR',
  'repair-broken-pod-label-key': 'REPAIR_BROKEN_POD_LABEL_KEY',
  'repair-broken-pod-label-value': 'REPAIR_BROKEN_POD_LABEL_VALUE',
  'repair-delete-pods': 'REPAIR_DELETE_PODS',
  'repair-enabled': 'REPAIR_ENABLED',
  'repair-field-selectors': 'REPAIR_FIELD_SELECTORS',
  'repair-init-container-exit-code': 'REPAIR_INIT_CONTAINER_EXIT_CODE',
  'repair-init-container-name': 'REPAIR_INIT_CONTAINER_NAME',
  'repair-init-container-termination-message': 'REPAIR_INIT_CONTAINER_TERMINATION_MESSAGE',
  'repair-label-pods': 'REPAIR_LABEL_PODS',
  'repair-label-selectors': 'REPAIR_LABEL_SELECTORS',
  'repair-node-name': 'REPAIR_NODE_NAME',
  'repair-sidecar-annotation': 'REPAIR_SIDECAR_ANNOTATION',
  'skip-tls-verify': 'SKIP_TLS_VERIFY',
  'ztunnel-uds-address': 'ZTUNNEL_UDS_ADDRESS',
} as const;

export type InstallCniFlagName = keyof typeof INSTALL_CNI_FLAG_SETTINGS;

/** The parsed flags, and which of them the user actually gave (the others fall back to settings). */
export interface InstallCniFlagInput {
  values: Readonly<Record<string, unknown>>;
  given: ReadonlySet<string>;
}

const MAX_FILE_MODE = 0o7777;

/**
 * Resolves every install-cni flag: the flag when given, else its setting (whose default is the
 * flag's default), then checks the values that have a constrained form.
 * @throws InstallOptionsError naming the flag or setting and the value.
 */
export function resolveInstallCniOptions(input: InstallCniFlagInput, settings: Settings): InstallCniOptions {
  const sources = {} as Record<InstallCniFlagName, string>;
  const value = (flag: InstallCniFlagName): unknown => {
    const setting = INSTALL_CNI_FLAG_SETTINGS[flag];
    if (input.given.has(flag) && input.values[flag] !== undefined) {
      sources[flag] = `--${flag}`;
      return input.values[flag];
    }
    sources[flag] = setting;
    return settings.resolve(setting).value;
  };
  const str = (flag: InstallCniFlagName) => String(value(flag) ?? '');
  const bool = (flag: InstallCniFlagName) => value(flag) === true;
  const int = (flag: InstallCniFlagName) => Number(value(flag));

  const options: InstallCniOptions = {
    ambientEnabled: bool('ambient-enabled'),
    chainedCniPlugin: bool('chained-cni-plugin'),
    cniAgentRunDir: str('cni-agent-run-dir'),
    cniConfName: str('cni-conf-name'),
    cniNetworkConfig: str('cni-network-config'),
    cniNetworkConfigFile: str('cni-network-config-file'),
    orchCaFile: str('orch-ca-file'),
    orchConfigMode: int('orchconfig-mode'),
    logLevel: str('log-level'),
    monitoringPort: int('monitoring-port'),
    mountedCniNetDir: str('mounted-cni-net-dir'),
    mountedCniBinDir: settings.string('MOUNTED_CNI_BIN_DIR'),
    orchConfigPath: settings.string('ORCHCONFIG'),
    podNamespace: settings.string('POD_NAMESPACE'),
    nodeName: settings.string('NODE_NAME'),
    skipTlsVerify: bool('skip-tls-verify'),
    ztunnelUdsAddress: str('ztunnel-uds-address'),
    // Checked by the repair module (with the flag or setting each value came from), once sources are known.
    repair: undefined as unknown as RepairOptions,
    sources,
  };
  validate(options);
  options.repair = parseRepairOptions(
    {
      enabled: bool('repair-enabled'),
      nodeName: str('repair-node-name'),
      labelPods: bool('repair-label-pods'),
      deletePods: bool('repair-delete-pods'),
      labelKey: str('repair-broken-pod-label-key'),
      labelValue: str('repair-broken-pod-label-value'),
      fieldSelectors: str('repair-field-selectors'),
      labelSelectors: str('repair-label-selectors'),
      initContainerName: str('repair-init-container-name'),
      initContainerExitCode: int('repair-init-container-exit-code'),
      initContainerTerminationMessage: str('repair-init-container-termination-message'),
      sidecarAnnotation: str('repair-sidecar-annotation'),
    },
    (option) => sources[REPAIR_PARAMETERS[option].flag],
  );
  return options;
}

function validate(o: InstallCniOptions): void {
  const bad = (flag: InstallCniFlagName, shown: unknown, why: string): never => {
    throw new InstallOptionsError(`invalid ${o.sources[flag]} ${JSON.stringify(shown)}: ${why}`);
  };
  if (!Number.isInteger(o.orchConfigMode) || o.orchConfigMode < 0 || o.orchConfigMode > MAX_FILE_MODE) {
    bad('orchconfig-mode', o.orchConfigMode, `a file mode is a decimal integer from 0 to ${MAX_FILE_MODE} (384 = 0600)`);
  }
  if (!isLevel(o.logLevel)) bad('log-level', o.logLevel, `expected one of ${LEVELS.join(', ')}`);
  if (!Number.isInteger(o.monitoringPort) || o.monitoringPort < 0 || o.monitoringPort > 65535) {
    bad('monitoring-port', o.monitoringPort, 'a port is a number from 0 to 65535');
  }
  if (o.cniConfName) {
    if (o.cniConfName !== path.basename(o.cniConfName) || o.cniConfName === '.' || o.cniConfName === '..') {
      bad('cni-conf-name', o.cniConfName, `a file name inside ${o.sources['mounted-cni-net-dir']}, not a path`);
    }
    if (!CNI_CONFIG_EXTENSIONS.includes(path.extname(o.cniConfName))) {
      bad('cni-conf-name', o.cniConfName, `the container runtime only reads files ending in ${CNI_CONFIG_EXTENSIONS.join(', ')}`);
    }
  }
  if (!o.mountedCniNetDir) bad('mounted-cni-net-dir', '', 'a directory is required');
  if (!o.cniAgentRunDir) bad('cni-agent-run-dir', '', 'a directory is required');
  if (!o.mountedCniBinDir) throw new InstallOptionsError('invalid MOUNTED_CNI_BIN_DIR "": a directory is required');
}

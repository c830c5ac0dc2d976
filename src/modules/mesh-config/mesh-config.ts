import { inject, injectable, optional } from 'inversify';
import { Logging, LoggingToken } from '../logging';
import { MeshConfigError } from './fields';
import { ConfigLog, LayeredConfig, SILENT_CONFIG_LOG } from './layered-config';
import { DEFAULT_MESH_NETWORKS, MeshNetworksValues, parseMeshNetworks } from './networks';
import { MESH_CONFIG_MAX_BYTES, MeshConfigLayer, mergeMeshConfig, parseMeshConfigLayer } from './parse';
import { DEFAULT_MESH_CONFIG, MeshConfigValues } from './values';

/**
 * The mesh config file of the running command (`--meshConfig`), bound in its scope. Not bound
 * (a program or test that reads no file): the defaults.
 */
export const MeshConfigFileToken = Symbol.for('mesh.MeshConfigFile');
/** The mesh networks file (`--networksConfig`), bound like the mesh config file. */
export const MeshNetworksFileToken = Symbol.for('mesh.MeshNetworksFile');
/** How often the files are read besides their directory's events; bound by tests that need it fast. */
export const MeshConfigPollMsToken = Symbol.for('mesh.MeshConfigPollMs');

/** The layers of the mesh config and networks, lowest first: the file, then the orchestrator's `mesh` ConfigMap (which wins). */
export type MeshConfigLayerName = 'file' | 'configmap';
const LAYERS: readonly MeshConfigLayerName[] = ['file', 'configmap'];

function logOf(logging: Logging | undefined): ConfigLog {
  if (!logging) return SILENT_CONFIG_LOG;
  const log = logging.scope('default');
  return { info: (m) => log.info(m), warn: (m) => log.warn(m), error: (m) => log.error(m) };
}

/**
 * The live mesh config: the defaults, the `--meshConfig` file over them, and the orchestrator
 * `mesh` ConfigMap over both (layers `file`, `configmap`). The file is read when the holder is
 * made (a file that is there but unusable stops start-up with a MeshConfigError naming the file
 * and field) and watched from `watch()` on; later versions that do not parse are refused and
 * the last good one stays. Readers take `current()` when they need a value, and `onChange` to
 * act on changes; `setLayer('configmap', text | undefined, where)` sets or clears the ConfigMap's.
 */
@injectable()
export class MeshConfig extends LayeredConfig<MeshConfigValues, MeshConfigLayer> {
  constructor(
    @inject(MeshConfigFileToken) @optional() readonly file?: string,
    @inject(LoggingToken) @optional() logging?: Logging,
    @inject(MeshConfigPollMsToken) @optional() pollMs?: number,
  ) {
    super({
      what: 'mesh config',
      defaults: DEFAULT_MESH_CONFIG,
      order: LAYERS,
      parse: parseMeshConfigLayer,
      merge: mergeMeshConfig,
      log: logOf(logging),
      startupError: (message) => new MeshConfigError(message),
    });
    if (file !== undefined) this.loadFile('file', file, `--meshConfig ${file}`, { maxBytes: MESH_CONFIG_MAX_BYTES, pollMs });
  }
}

/**
 * The live mesh networks (`--networksConfig`, then the `meshNetworks` key of the orchestrator
 * ConfigMap, which replaces it): default networks (none) when neither is there; watched,
 * checked and kept like the mesh config.
 */
@injectable()
export class MeshNetworks extends LayeredConfig<MeshNetworksValues, MeshNetworksValues> {
  constructor(
    @inject(MeshNetworksFileToken) @optional() readonly file?: string,
    @inject(LoggingToken) @optional() logging?: Logging,
    @inject(MeshConfigPollMsToken) @optional() pollMs?: number,
  ) {
    super({
      what: 'mesh networks',
      defaults: DEFAULT_MESH_NETWORKS,
      order: LAYERS,
      parse: (text, where) => {
        const { values, warnings } = parseMeshNetworks(text, where);
        return { layer: values, warnings };
      },
      merge: (_base, layer) => layer,
      log: logOf(logging),
      startupError: (message) => new MeshConfigError(message),
    });
    if (file !== undefined) this.loadFile('file', file, `--networksConfig ${file}`, { maxBytes: MESH_CONFIG_MAX_BYTES, pollMs });
  }
}

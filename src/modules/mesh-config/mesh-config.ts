import { inject, injectable, optional } from 'inversify';
import { Logging, LoggingToken } from '../logging';
import { MeshConfigError } from './fields';
import { ChangeListener, ConfigLog, LayeredConfig, SILENT_CONFIG_LOG } from './layered-config';
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

/** The layers of the mesh config, lowest first: the file, then the orchestrator's `mesh` ConfigMap (which wins). */
export type MeshConfigLayerName = 'file' | 'configmap';

function logOf(logging: Logging | undefined): ConfigLog {
  if (!logging) return SILENT_CONFIG_LOG;
  const log = logging.scope('default');
  return { info: (m) => log.info(m), warn: (m) => log.warn(m), error: (m) => log.error(m) };
}

class MeshConfigLayers extends LayeredConfig<MeshConfigValues, MeshConfigLayer> {
  protected override startupError(message: string): Error {
    return new MeshConfigError(message);
  }
}

/**
 * The live mesh config: the defaults, the `--meshConfig` file over them, and the orchestrator
 * `mesh` ConfigMap over both. The file is read when the holder is made (a file that is there
 * but unusable stops start-up with a MeshConfigError naming the file and field) and watched
 * from `watch()` on; later versions that do not parse are refused and the last good one stays.
 * Readers take `current()` when they need a value, and `onChange` to act on changes.
 */
@injectable()
export class MeshConfig {
  private readonly config: MeshConfigLayers;

  constructor(
    @inject(MeshConfigFileToken) @optional() readonly file?: string,
    @inject(LoggingToken) @optional() logging?: Logging,
    @inject(MeshConfigPollMsToken) @optional() pollMs?: number,
  ) {
    this.config = new MeshConfigLayers({
      what: 'mesh config',
      defaults: DEFAULT_MESH_CONFIG,
      order: ['file', 'configmap'],
      parse: parseMeshConfigLayer,
      merge: mergeMeshConfig,
      log: logOf(logging),
    });
    if (file !== undefined) this.config.loadFile('file', file, `--meshConfig ${file}`, { maxBytes: MESH_CONFIG_MAX_BYTES, pollMs });
  }

  current(): MeshConfigValues {
    return this.config.current();
  }

  onChange(listener: ChangeListener<MeshConfigValues>): () => void {
    return this.config.onChange(listener);
  }

  /**
   * Sets (text) or clears (undefined) a layer; `where` names its source in messages, e.g.
   * `ConfigMap mesh-system/mesh key mesh`. Invalid text is refused (logged, and returned).
   */
  setLayer(name: MeshConfigLayerName, text: string | undefined, where: string): { ok: true } | { ok: false; error: string } {
    return this.config.setLayer(name, text, where);
  }

  /** Starts watching the file (idempotent). */
  watch(): void {
    this.config.watchFiles();
  }

  stop(): void {
    this.config.stopWatching();
  }

  /** Reads the file now instead of waiting for its directory's next event. */
  recheck(): void {
    this.config.checkFiles();
  }
}

/**
 * The live mesh networks (`--networksConfig`, then the `meshNetworks` key of the orchestrator
 * ConfigMap, which replaces it): default networks (none) when neither is there; watched,
 * checked and kept like the mesh config.
 */
@injectable()
export class MeshNetworks {
  private readonly config: LayeredConfig<MeshNetworksValues, MeshNetworksValues>;

  constructor(
    @inject(MeshNetworksFileToken) @optional() readonly file?: string,
    @inject(LoggingToken) @optional() logging?: Logging,
    @inject(MeshConfigPollMsToken) @optional() pollMs?: number,
  ) {
    this.config = new (class extends LayeredConfig<MeshNetworksValues, MeshNetworksValues> {
      protected override startupError(message: string): Error {
        return new MeshConfigError(message);
      }
    })({
      what: 'mesh networks',
      defaults: DEFAULT_MESH_NETWORKS,
      order: ['file', 'configmap'],
      parse: (text, where) => {
        const { values, warnings } = parseMeshNetworks(text, where);
        return { layer: values, warnings };
      },
      merge: (_base, layer) => layer,
      log: logOf(logging),
    });
    if (file !== undefined) this.config.loadFile('file', file, `--networksConfig ${file}`, { maxBytes: MESH_CONFIG_MAX_BYTES, pollMs });
  }

  current(): MeshNetworksValues {
    return this.config.current();
  }

  onChange(listener: ChangeListener<MeshNetworksValues>): () => void {
    return this.config.onChange(listener);
  }

  setLayer(name: MeshConfigLayerName, text: string | undefined, where: string): { ok: true } | { ok: false; error: string } {
    return this.config.setLayer(name, text, where);
  }

  watch(): void {
    this.config.watchFiles();
  }

  stop(): void {
    this.config.stopWatching();
  }

  recheck(): void {
    this.config.checkFiles();
  }
}

/**
 * The orchestrator's `mesh` ConfigMap of the system namespace: its `mesh` key is the top layer
 * of the mesh config (over the `--meshConfig` file), its `meshNetworks` key the mesh networks
 * (over `--networksConfig`), watched with an informer. Deleting the ConfigMap or a key removes
 * that layer; a version that does not parse is refused by the holder and the last good one stays.
 */
import type { ScopedLogger } from '../logging';
import type { MeshConfig, MeshNetworks } from '../mesh-config';
import { CONFIG_MAPS, Informer, OrchClient, OrchObject } from '../orch';

/** The ConfigMap the mesh config lives in, as the injector's `--meshConfigMapName` default names it. */
export const MESH_CONFIG_MAP = 'mesh';

interface ConfigMap extends OrchObject {
  data?: Record<string, string>;
}

export interface MeshConfigMapOptions {
  client: OrchClient;
  /** The system namespace (`--namespace`, else POD_NAMESPACE). */
  namespace: string;
  meshConfig: MeshConfig;
  meshNetworks: MeshNetworks;
  log: ScopedLogger;
  resyncMs?: number;
}

export class MeshConfigMapSource {
  private informer: Informer<ConfigMap> | undefined;

  constructor(private readonly options: MeshConfigMapOptions) {}

  start(): void {
    const { client, namespace } = this.options;
    this.informer = client.informer<ConfigMap>(CONFIG_MAPS, { namespace, fieldSelector: `metadata.name=${MESH_CONFIG_MAP}`, resyncMs: this.options.resyncMs });
    this.informer.on({
      add: (cm) => this.apply(cm),
      update: (_old, cm, resync) => {
        if (!resync) this.apply(cm);
      },
      delete: () => this.apply(undefined),
    });
    this.informer.start();
  }

  /** Resolves true once the first list is in (the ConfigMap's layers applied, if it exists). */
  waitForSync(timeoutMs: number): Promise<boolean> {
    return this.informer ? this.informer.waitForSync(timeoutMs) : Promise.resolve(true);
  }

  stop(): void {
    this.informer?.stop();
  }

  private apply(cm: ConfigMap | undefined): void {
    const { namespace, meshConfig, meshNetworks, log } = this.options;
    const where = (key: string) => `ConfigMap ${namespace}/${MESH_CONFIG_MAP} key ${key}`;
    const mesh = cm?.data?.mesh;
    if (cm && mesh === undefined) log.warn(`ConfigMap ${namespace}/${MESH_CONFIG_MAP} has no "mesh" key: the --meshConfig file and the defaults apply`);
    meshConfig.setLayer('configmap', mesh, where('mesh'));
    meshNetworks.setLayer('configmap', cm?.data?.meshNetworks, where('meshNetworks'));
  }
}

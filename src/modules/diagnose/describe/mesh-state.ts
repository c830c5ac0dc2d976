/**
 * The mesh as the control plane sees it, read from the orchestrator API for one look: the mesh
 * config (the `mesh` ConfigMap of the system namespace over the defaults) and every mesh
 * resource, validated as the daemon validates them (an object the daemon would reject is left
 * out, as it is not in force).
 */
import { ConfigResource, ConfigSnapshot, KindRegistry, resourceOf, validateDocument } from '../../config';
import { MESH_CONFIG_MAP } from '../../discovery/mesh-configmap';
import { MeshConfigValues, parseMeshConfig } from '../../mesh-config';
import { CONFIG_MAPS, OrchClient, statusCodeOf } from '../../orch';
import { getObject, listObjects } from '../orch-reads';

export interface MeshState {
  mesh: MeshConfigValues;
  config: ConfigSnapshot;
  /** `Kind namespace/name: why` of each object left out because the daemon would refuse it. */
  rejected: string[];
}

export interface MeshStateOptions {
  /** `--meshNamespace`: where the mesh ConfigMap lives. */
  meshNamespace: string;
  /** The control plane revision whose mesh ConfigMap applies (`mesh-<revision>`); '' or `default` for `mesh`. */
  revision: string;
  /** Namespaces to read one by one when listing everywhere is forbidden (the workload's and the root namespace). */
  fallbackNamespaces: readonly string[];
}

interface ConfigMap {
  data?: Record<string, string>;
}

/** The mesh config in force: the revision's mesh ConfigMap over the defaults (the defaults alone when it is absent). */
export async function readMeshConfig(client: OrchClient, meshNamespace: string, revision: string): Promise<MeshConfigValues> {
  const name = revision && revision !== 'default' ? `${MESH_CONFIG_MAP}-${revision}` : MESH_CONFIG_MAP;
  const cm = await getObject<ConfigMap>(client, CONFIG_MAPS, meshNamespace, name);
  return parseMeshConfig(cm?.data?.mesh ?? '', `ConfigMap ${meshNamespace}/${name} key mesh`);
}

export async function readMeshState(client: OrchClient, kinds: KindRegistry, options: MeshStateOptions): Promise<MeshState> {
  const mesh = await readMeshConfig(client, options.meshNamespace, options.revision);
  const byKind = new Map<string, ConfigResource[]>();
  const rejected: string[] = [];
  await Promise.all(
    kinds.all().map(async (def) => {
      const objects = await listEverywhereOrIn(client, def, [...new Set([...options.fallbackNamespaces, mesh.rootNamespace])]);
      const valid: ConfigResource[] = [];
      for (const obj of objects) {
        const result = validateDocument(obj, kinds);
        if (result.ok) valid.push(result.resource);
        else rejected.push(`${def.kind} ${result.namespace}/${result.name}: ${result.issues.map((i) => (i.field ? `${i.field}: ${i.message}` : i.message)).join('; ')}`);
      }
      valid.sort((a, b) => compare(`${a.metadata.namespace}/${a.metadata.name}`, `${b.metadata.namespace}/${b.metadata.name}`));
      byKind.set(def.kind, valid);
    }),
  );
  return { mesh, config: byKind, rejected: rejected.sort() };
}

/**
 * The kind's objects in every namespace; when that is forbidden, in each of `namespaces`. A kind
 * whose definition is not installed has none.
 */
async function listEverywhereOrIn(client: OrchClient, def: Parameters<typeof resourceOf>[0], namespaces: readonly string[]): Promise<unknown[]> {
  const resource = resourceOf(def);
  try {
    return await listObjects(client, resource);
  } catch (err) {
    const status = statusCodeOf(err);
    if (status === 404) return [];
    if (status !== 403) throw err;
  }
  const lists = await Promise.all(
    namespaces.map(async (ns) => {
      try {
        return await listObjects(client, resource, ns);
      } catch (err) {
        if (statusCodeOf(err) === 404) return [];
        throw err;
      }
    }),
  );
  return lists.flat();
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

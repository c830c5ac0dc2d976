import { orchLibrary } from '../orch';
import { crdNames, KindRegistry, storageVersion } from '../config';
import type { OrchClient } from '../orch';
import { AnalysisObject, toAnalysisObject } from './objects';

type Listed = { items: unknown[] };

/**
 * The live cluster's objects analyzers read: every mesh kind the cluster serves, and the
 * Services, Pods, Namespaces, ConfigMaps, Secrets and Deployments, across all namespaces (a
 * reference can cross namespaces; which messages are shown is decided afterwards).
 */
export async function readClusterObjects(client: OrchClient, kinds: KindRegistry): Promise<AnalysisObject[]> {
  const core = client.api(orchLibrary().CoreV1Api);
  const apps = client.api(orchLibrary().AppsV1Api);
  const custom = client.api(orchLibrary().CustomObjectsApi);
  const lists: Array<{ kind: string; apiVersion: string; list: () => Promise<Listed>; optional?: boolean }> = [
    { kind: 'Namespace', apiVersion: 'v1', list: () => core.listNamespace() },
    { kind: 'Service', apiVersion: 'v1', list: () => core.listServiceForAllNamespaces() },
    { kind: 'Pod', apiVersion: 'v1', list: () => core.listPodForAllNamespaces() },
    { kind: 'ConfigMap', apiVersion: 'v1', list: () => core.listConfigMapForAllNamespaces() },
    { kind: 'Secret', apiVersion: 'v1', list: () => core.listSecretForAllNamespaces() },
    { kind: 'Deployment', apiVersion: 'apps/v1', list: () => apps.listDeploymentForAllNamespaces() },
    ...kinds.all().map((def) => {
      const version = storageVersion(def);
      return {
        kind: def.kind,
        apiVersion: `${def.group}/${version}`,
        // A cluster without the mesh's CRDs has none of these: nothing to analyze, not an error.
        optional: true,
        list: () => custom.listClusterCustomObject({ group: def.group, version, plural: crdNames(def).plural }) as Promise<Listed>,
      };
    }),
  ];
  const out: AnalysisObject[] = [];
  await Promise.all(
    lists.map(async ({ kind, apiVersion, list, optional }) => {
      let listed: Listed;
      try {
        listed = await list();
      } catch (err) {
        if (optional && (err as { code?: number }).code === 404) return;
        throw new Error(`listing ${kind} objects: ${(err as Error).message}`);
      }
      for (const item of listed.items ?? []) {
        // Typed lists drop kind/apiVersion from items; put them back as written.
        const doc = { ...(item as Record<string, unknown>), kind, apiVersion };
        const o = toAnalysisObject(doc);
        if (o) out.push(o);
      }
    }),
  );
  return out;
}

import * as k8s from '@kubernetes/client-node';
import { WorkloadEntryObject, WorkloadGroupObject } from './entry-for-proxy';

/** Where auto-registration gets its API: none when the daemon runs without an orchestrator. */
export const WorkloadEntryApiSourceToken = Symbol.for('mesh.WorkloadEntryApiSource');
export interface WorkloadEntryApiSource {
  api(): WorkloadEntryApi | undefined;
}

/** What auto-registration reads and writes on the orchestrator. */
export interface WorkloadEntryApi {
  getGroup(namespace: string, name: string): Promise<WorkloadGroupObject | undefined>;
  getEntry(namespace: string, name: string): Promise<WorkloadEntryObject | undefined>;
  createEntry(entry: WorkloadEntryObject): Promise<WorkloadEntryObject>;
  /** Replaces the entry; fails with a conflict when its resourceVersion is no longer current. */
  replaceEntry(entry: WorkloadEntryObject): Promise<WorkloadEntryObject>;
  /** Deletes the entry only while it is still at `resourceVersion`; absent is done. */
  deleteEntry(namespace: string, name: string, resourceVersion: string): Promise<void>;
  listEntries(): Promise<WorkloadEntryObject[]>;
}

const GROUP = 'networking.mesh.io';
const VERSION = 'v1';

/** The API over the library's custom-objects client (the daemon's rate-limited one). */
export class CustomObjectsWorkloadEntryApi implements WorkloadEntryApi {
  constructor(private readonly api: k8s.CustomObjectsApi) {}

  async getGroup(namespace: string, name: string): Promise<WorkloadGroupObject | undefined> {
    return absentOn404(() => this.api.getNamespacedCustomObject({ group: GROUP, version: VERSION, namespace, plural: 'workloadgroups', name }));
  }

  async getEntry(namespace: string, name: string): Promise<WorkloadEntryObject | undefined> {
    return absentOn404(() => this.api.getNamespacedCustomObject({ group: GROUP, version: VERSION, namespace, plural: 'workloadentries', name }));
  }

  async createEntry(entry: WorkloadEntryObject): Promise<WorkloadEntryObject> {
    const namespace = entry.metadata.namespace!;
    return this.api.createNamespacedCustomObject({ group: GROUP, version: VERSION, namespace, plural: 'workloadentries', body: entry });
  }

  async replaceEntry(entry: WorkloadEntryObject): Promise<WorkloadEntryObject> {
    const { namespace, name } = entry.metadata;
    return this.api.replaceNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: namespace!, plural: 'workloadentries', name, body: entry });
  }

  async deleteEntry(namespace: string, name: string, resourceVersion: string): Promise<void> {
    await absentOn404(() =>
      this.api.deleteNamespacedCustomObject({
        group: GROUP,
        version: VERSION,
        namespace,
        plural: 'workloadentries',
        name,
        body: { preconditions: { resourceVersion } },
      }),
    );
  }

  async listEntries(): Promise<WorkloadEntryObject[]> {
    const list = (await this.api.listClusterCustomObject({ group: GROUP, version: VERSION, plural: 'workloadentries' })) as { items?: WorkloadEntryObject[] };
    return list.items ?? [];
  }
}

/** The status code of an API error from the library, if it is one. */
export function statusOf(err: unknown): number | undefined {
  const code = (err as { code?: unknown }).code;
  return typeof code === 'number' ? code : undefined;
}

async function absentOn404<T>(call: () => Promise<T>): Promise<T | undefined> {
  try {
    return await call();
  } catch (err) {
    if (statusOf(err) === 404) return undefined;
    throw err;
  }
}

import { Proxy } from '../../model/proxy';

/** The annotations an auto-registered WorkloadEntry carries, as the incumbent names them (renamed). */
export const AUTO_REGISTRATION_GROUP = 'mesh.io/autoRegistrationGroup';
export const WORKLOAD_CONTROLLER = 'mesh.io/workloadController';
export const CONNECTED_AT = 'mesh.io/connectedAt';
export const DISCONNECTED_AT = 'mesh.io/disconnectedAt';

/** Node metadata naming the WorkloadGroup a proxy registers itself from (`MESH_META_AUTO_REGISTER_GROUP`). */
export const AUTO_REGISTER_GROUP_METADATA = 'AUTO_REGISTER_GROUP';

/** The orchestrator objects read and written here, as plain JSON. */
export interface OrchMeta {
  name: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: { apiVersion: string; kind: string; name: string; uid: string; controller?: boolean }[];
}
export interface WorkloadGroupObject {
  apiVersion: string;
  kind: 'WorkloadGroup';
  metadata: OrchMeta;
  spec: {
    metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
    template?: { labels?: Record<string, string>; ports?: Record<string, number>; network?: string; locality?: string; weight?: number; serviceAccount?: string };
  };
}
export interface WorkloadEntryObject {
  apiVersion: string;
  kind: 'WorkloadEntry';
  metadata: OrchMeta;
  spec: { address?: string; labels?: Record<string, string>; ports?: Record<string, number>; network?: string; locality?: string; weight?: number; serviceAccount?: string };
}

/** Why a proxy may not register from a group; the message names both. */
export class RegistrationRefused extends Error {}

/**
 * The entry's name: `<group>-<ip>`, and `-<network>` when the proxy names one, so the same
 * address on two networks is two workloads. Characters an object name cannot hold become `-`.
 */
export function entryNameFor(group: string, proxy: Proxy): string {
  const network = proxy.metadata.NETWORK ?? '';
  const raw = `${group}-${proxy.ips[0] ?? ''}${network ? `-${network}` : ''}`;
  return raw.toLowerCase().replace(/[^a-z0-9.-]/g, '-').slice(0, 253);
}

/**
 * The WorkloadEntry for `proxy` from `group`'s template: the proxy's address, network and
 * locality where the template leaves them open, the group's and the proxy's labels, owned by
 * the group (so deleting the group deletes its entries).
 */
export function entryForProxy(group: WorkloadGroupObject, proxy: Proxy, controller: string, now: Date): WorkloadEntryObject {
  const template = group.spec.template ?? {};
  const groupMeta = group.spec.metadata ?? {};
  const labels = { ...(template.labels ?? {}), ...(groupMeta.labels ?? {}), ...proxy.labels };
  const network = template.network || proxy.metadata.NETWORK || undefined;
  const locality = template.locality || proxy.metadata.LOCALITY || undefined;
  return {
    apiVersion: group.apiVersion,
    kind: 'WorkloadEntry',
    metadata: {
      name: entryNameFor(group.metadata.name, proxy),
      namespace: group.metadata.namespace,
      labels: { ...(groupMeta.labels ?? {}), ...proxy.labels },
      annotations: {
        ...(groupMeta.annotations ?? {}),
        [AUTO_REGISTRATION_GROUP]: group.metadata.name,
        [WORKLOAD_CONTROLLER]: controller,
        [CONNECTED_AT]: now.toISOString(),
      },
      ownerReferences: group.metadata.uid
        ? [{ apiVersion: group.apiVersion, kind: 'WorkloadGroup', name: group.metadata.name, uid: group.metadata.uid, controller: true }]
        : undefined,
    },
    spec: {
      ...template,
      address: proxy.ips[0],
      labels,
      ...(network ? { network } : {}),
      ...(locality ? { locality } : {}),
    },
  };
}

/**
 * A proxy may register only as the identity the group gives its workloads: its authenticated
 * SPIFFE ID must name the group's namespace and the template's service account. Without an
 * authenticated identity (a plaintext listener) it may not register at all while
 * MESH_WORKLOAD_ENTRY_VALIDATE_IDENTITY is on.
 */
export function checkRegistrationIdentity(group: WorkloadGroupObject, proxy: Proxy, identities: readonly string[], validate: boolean): void {
  const where = `WorkloadGroup ${group.metadata.namespace}/${group.metadata.name}`;
  if (proxy.namespace !== group.metadata.namespace) {
    throw new RegistrationRefused(`${where}: proxy ${proxy.id} is in namespace ${proxy.namespace}, not the group's`);
  }
  if (!validate) return;
  if (identities.length === 0) throw new RegistrationRefused(`${where}: proxy ${proxy.id} has no authenticated identity to register with`);
  const account = group.spec.template?.serviceAccount || 'default';
  const suffix = `/ns/${group.metadata.namespace}/sa/${account}`;
  if (!identities.some((id) => id.startsWith('spiffe://') && id.endsWith(suffix))) {
    throw new RegistrationRefused(`${where}: proxy ${proxy.id} authenticated as ${identities.join(', ')}, not as service account ${group.metadata.namespace}/${account}`);
  }
}

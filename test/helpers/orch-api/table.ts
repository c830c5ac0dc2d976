import { type ResourceType } from './resources';
import type { Obj } from './store';

/*
 * Server-side printing (meta.k8s.io/v1 Table), which `kubectl get` asks for: the real
 * server's columns for the kinds people look at (pods, services, deployments, ...), a CRD's
 * additionalPrinterColumns, and Name/Age for everything else.
 */

export function wantsTable(accept: string | undefined): boolean {
  return !!accept && /as=Table/.test(accept) && /g=meta\.k8s\.io/.test(accept);
}

interface Column {
  name: string;
  type: string;
  format?: string;
  priority?: number;
  cell: (o: Obj) => unknown;
}

const name: Column = { name: 'Name', type: 'string', format: 'name', cell: (o) => o.metadata.name };
const age: Column = { name: 'Age', type: 'string', cell: (o) => humanAge(o.metadata.creationTimestamp) };

function columnsFor(type: ResourceType, version: string): Column[] {
  switch (`${type.group}/${type.plural}`) {
    case '/pods':
      return [
        name,
        { name: 'Ready', type: 'string', cell: (o) => `${(o.status?.containerStatuses ?? []).filter((c: Obj) => c.ready).length}/${(o.spec?.containers ?? []).length}` },
        { name: 'Status', type: 'string', cell: (o) => (o.metadata.deletionTimestamp ? 'Terminating' : (o.status?.phase ?? 'Pending')) },
        { name: 'Restarts', type: 'string', cell: (o) => String((o.status?.containerStatuses ?? []).reduce((n: number, c: Obj) => n + (c.restartCount ?? 0), 0)) },
        age,
        { name: 'IP', type: 'string', priority: 1, cell: (o) => o.status?.podIP ?? '<none>' },
        { name: 'Node', type: 'string', priority: 1, cell: (o) => o.spec?.nodeName ?? '<none>' },
      ];
    case '/services':
      return [
        name,
        { name: 'Type', type: 'string', cell: (o) => o.spec?.type ?? 'ClusterIP' },
        { name: 'Cluster-IP', type: 'string', cell: (o) => o.spec?.clusterIP ?? '<none>' },
        { name: 'External-IP', type: 'string', cell: (o) => (o.spec?.externalIPs ?? []).join(',') || '<none>' },
        { name: 'Port(s)', type: 'string', cell: (o) => (o.spec?.ports ?? []).map((p: Obj) => `${p.port}${p.nodePort ? ':' + p.nodePort : ''}/${p.protocol ?? 'TCP'}`).join(',') || '<none>' },
        age,
      ];
    case 'apps/deployments':
      return [
        name,
        { name: 'Ready', type: 'string', cell: (o) => `${o.status?.readyReplicas ?? 0}/${o.spec?.replicas ?? 0}` },
        { name: 'Up-to-date', type: 'integer', cell: (o) => o.status?.updatedReplicas ?? 0 },
        { name: 'Available', type: 'integer', cell: (o) => o.status?.availableReplicas ?? 0 },
        age,
      ];
    case 'apps/replicasets':
      return [name, { name: 'Desired', type: 'integer', cell: (o) => o.spec?.replicas ?? 0 }, { name: 'Current', type: 'integer', cell: (o) => o.status?.replicas ?? 0 }, { name: 'Ready', type: 'integer', cell: (o) => o.status?.readyReplicas ?? 0 }, age];
    case '/namespaces':
      return [name, { name: 'Status', type: 'string', cell: (o) => o.status?.phase ?? '' }, age];
    case '/configmaps':
      return [name, { name: 'Data', type: 'integer', cell: (o) => Object.keys(o.data ?? {}).length + Object.keys(o.binaryData ?? {}).length }, age];
    case '/nodes':
      return [name, { name: 'Status', type: 'string', cell: () => 'Ready' }, { name: 'Roles', type: 'string', cell: () => '<none>' }, age, { name: 'Version', type: 'string', cell: (o) => o.status?.nodeInfo?.kubeletVersion ?? '' }];
    case 'discovery.k8s.io/endpointslices':
      return [
        name,
        { name: 'AddressType', type: 'string', cell: (o) => o.addressType ?? '' },
        { name: 'Ports', type: 'string', cell: (o) => (o.ports ?? []).map((p: Obj) => p.port).join(',') || '<unset>' },
        { name: 'Endpoints', type: 'string', cell: (o) => (o.endpoints ?? []).flatMap((e: Obj) => e.addresses ?? []).join(',') || '<unset>' },
        age,
      ];
    case 'apiextensions.k8s.io/customresourcedefinitions':
      return [name, { name: 'Created At', type: 'date', cell: (o) => o.metadata.creationTimestamp }];
  }
  if (type.crd) {
    const v = type.crd.spec.versions.find((x) => x.name === version);
    const extra = (v?.additionalPrinterColumns ?? []).map<Column>((c) => ({
      name: c.name,
      type: c.type,
      format: c.format,
      priority: c.priority,
      cell: (o) => {
        const value = jsonPath(o, c.jsonPath);
        return c.type === 'date' && typeof value === 'string' ? humanAge(value) : (value ?? null);
      },
    }));
    return [name, ...extra, ...(extra.some((c) => c.name === 'Age') ? [] : [age])];
  }
  return [name, age];
}

/** `.spec.replicas`, `.status.conditions[0].type`: the simple JSONPath of printer columns. */
function jsonPath(obj: Obj, path: string): unknown {
  let value: unknown = obj;
  for (const part of path.replace(/^\{?\.?/, '').replace(/\}$/, '').split('.')) {
    if (part === '') continue;
    const m = /^([^[]*)((?:\[\d+\])*)$/.exec(part);
    if (!m) return undefined;
    if (m[1]) value = (value as Obj | undefined)?.[m[1]];
    for (const idx of m[2].match(/\d+/g) ?? []) value = (value as unknown[] | undefined)?.[Number(idx)];
  }
  return value;
}

export function humanAge(timestamp: string | undefined, now = Date.now()): string {
  if (!timestamp) return '<unknown>';
  const s = Math.max(0, Math.floor((now - Date.parse(timestamp)) / 1000));
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 10) return `${m}m${s % 60 ? `${s % 60}s` : ''}`;
  if (m < 180) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h`;
  return `${Math.floor(h / 24)}d`;
}

function partial(obj: Obj, includeObject: string, apiVersion: string): Obj | undefined {
  if (includeObject === 'None') return undefined;
  if (includeObject === 'Object') return { ...obj, apiVersion };
  return { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: obj.metadata };
}

export function table(type: ResourceType, version: string, apiVersion: string, objects: Obj[], listMeta: Obj, includeObject = 'Metadata', withColumns = true): Obj {
  const columns = columnsFor(type, version);
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: listMeta,
    ...(withColumns ? { columnDefinitions: columns.map((c) => ({ name: c.name, type: c.type, format: c.format ?? '', description: '', priority: c.priority ?? 0 })) } : { columnDefinitions: null }),
    rows: objects.map((o) => ({ cells: columns.map((c) => c.cell(o)), object: partial(o, includeObject, apiVersion) })),
  };
}

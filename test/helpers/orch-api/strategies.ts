import { invalid, type StatusCause } from './errors';
import { isObject } from './json-patch';
import { groupVersion, type ResourceType } from './resources';
import { labelSelectorMatches } from './selectors';
import type { Obj } from './store';

/*
 * Per-kind behaviour of the real server's registry strategies: defaults set on create, fields
 * kept on update (a Service's clusterIP, a Secret's stringData folded into data), the parts of
 * validation clients notice (names, a Deployment's selector, required fields) and the
 * allocation of Service cluster IPs (10.96.0.0/12) and node ports.
 */

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;

/** Kinds whose names must be DNS-1123 labels (63 chars) or DNS-1035 labels; the rest are DNS subdomains. */
const LABEL_NAMED = new Set(['/namespaces']);
const DNS_1035_NAMED = new Set(['/services']);

export class ClusterIpAllocator {
  private next = 1;
  private nextNodePort = 30000;
  private readonly used = new Set<string>();

  allocate(): string {
    for (;;) {
      const n = this.next++;
      const ip = `10.96.${(n >> 8) & 255}.${n & 255}`;
      if ((n & 255) !== 0 && !this.used.has(ip)) {
        this.used.add(ip);
        return ip;
      }
    }
  }

  reserve(ip: string): void {
    this.used.add(ip);
  }

  release(ip: string | undefined): void {
    if (ip) this.used.delete(ip);
  }

  nodePort(): number {
    return this.nextNodePort++;
  }
}

function key(type: ResourceType): string {
  return `${type.group}/${type.plural}`;
}

/** Defaults the real server sets when an object is created. */
export function prepareForCreate(type: ResourceType, obj: Obj, ips: ClusterIpAllocator): void {
  switch (key(type)) {
    case '/namespaces':
      obj.spec = { finalizers: ['kubernetes'], ...(obj.spec ?? {}) };
      obj.status = { phase: 'Active' };
      obj.metadata.labels = { ...(obj.metadata.labels ?? {}), 'kubernetes.io/metadata.name': obj.metadata.name };
      break;
    case '/pods':
      defaultPodSpec(obj.spec);
      obj.status = { phase: 'Pending', qosClass: 'BestEffort', ...(obj.status ?? {}) };
      break;
    case '/services':
      defaultService(obj, ips);
      break;
    case '/secrets':
      obj.type ??= 'Opaque';
      foldStringData(obj);
      break;
    case 'apps/deployments':
      obj.spec ??= {};
      obj.spec.replicas ??= 1;
      obj.spec.strategy ??= { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } };
      obj.spec.revisionHistoryLimit ??= 10;
      obj.spec.progressDeadlineSeconds ??= 600;
      defaultPodSpec(obj.spec.template?.spec);
      obj.status = {};
      break;
    case 'apps/replicasets':
    case 'apps/statefulsets':
    case 'apps/daemonsets':
    case 'batch/jobs':
      if (obj.spec && type.plural !== 'daemonsets' && type.plural !== 'jobs') obj.spec.replicas ??= 1;
      defaultPodSpec(obj.spec?.template?.spec);
      obj.status = {};
      break;
    case 'apiextensions.k8s.io/customresourcedefinitions':
      obj.status = crdStatus(obj);
      break;
    default:
      if (type.crd && type.subresources.includes('status')) delete obj.status;
  }
}

/** What an update keeps or derives from the old object. */
export function prepareForUpdate(type: ResourceType, obj: Obj, old: Obj): StatusCause[] {
  switch (key(type)) {
    case '/namespaces':
      obj.status = old.status;
      obj.metadata.labels = { ...(obj.metadata.labels ?? {}), 'kubernetes.io/metadata.name': obj.metadata.name };
      break;
    case '/services': {
      obj.spec ??= {};
      const was = old.spec?.clusterIP;
      if (obj.spec.clusterIP === undefined || obj.spec.clusterIP === '') {
        obj.spec.clusterIP = was;
        obj.spec.clusterIPs = old.spec?.clusterIPs;
      } else if (was && obj.spec.clusterIP !== was && old.spec?.type !== 'ExternalName') {
        return [{ reason: 'FieldValueInvalid', field: 'spec.clusterIPs[0]', message: `Invalid value: []string{"${obj.spec.clusterIP}"}: may not change once set` }];
      }
      defaultServicePorts(obj.spec);
      obj.spec.type ??= 'ClusterIP';
      break;
    }
    case '/secrets':
      foldStringData(obj);
      break;
    case 'apiextensions.k8s.io/customresourcedefinitions':
      if (obj.spec?.scope !== old.spec?.scope) return [{ reason: 'FieldValueInvalid', field: 'spec.scope', message: `Invalid value: "${obj.spec?.scope}": field is immutable` }];
      obj.status = crdStatus(obj, old.status);
      break;
  }
  return [];
}

/** Validation every kind gets (names) and the kind-specific rules clients run into. */
export function validateObject(type: ResourceType, obj: Obj): StatusCause[] {
  const causes: StatusCause[] = [];
  const name: string = obj.metadata?.name ?? '';
  const k = key(type);
  if (!name) causes.push({ reason: 'FieldValueRequired', field: 'metadata.name', message: 'Required value: name or generateName is required' });
  else if (LABEL_NAMED.has(k) || DNS_1035_NAMED.has(k)) {
    const pattern = DNS_1035_NAMED.has(k) ? DNS_1035_LABEL : DNS_LABEL;
    if (!pattern.test(name) || name.length > 63) {
      const what = DNS_1035_NAMED.has(k) ? `a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')` : `a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`;
      causes.push({ reason: 'FieldValueInvalid', field: 'metadata.name', message: `Invalid value: "${name}": ${what}` });
    }
  } else if (!DNS_SUBDOMAIN.test(name) || name.length > 253) {
    causes.push({
      reason: 'FieldValueInvalid',
      field: 'metadata.name',
      message: `Invalid value: "${name}": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
    });
  }
  for (const [label, value] of Object.entries(obj.metadata?.labels ?? {})) {
    if (typeof value !== 'string' || value.length > 63 || !/^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/.test(value)) {
      causes.push({ reason: 'FieldValueInvalid', field: 'metadata.labels', message: `Invalid value: ${JSON.stringify(value)}: a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character` });
    } else if (!/^([a-z0-9.-]+\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/.test(label)) {
      causes.push({ reason: 'FieldValueInvalid', field: 'metadata.labels', message: `Invalid value: ${JSON.stringify(label)}: name part must consist of alphanumeric characters, '-', '_' or '.'` });
    }
  }
  switch (k) {
    case '/pods':
      if (!Array.isArray(obj.spec?.containers) || obj.spec.containers.length === 0) causes.push({ reason: 'FieldValueRequired', field: 'spec.containers', message: 'Required value' });
      break;
    case '/services':
      if (obj.spec?.type !== 'ExternalName' && obj.spec?.clusterIP !== 'None' && (!Array.isArray(obj.spec?.ports) || obj.spec.ports.length === 0)) {
        causes.push({ reason: 'FieldValueRequired', field: 'spec.ports', message: 'Required value' });
      }
      break;
    case 'apps/deployments':
    case 'apps/replicasets':
    case 'apps/statefulsets':
    case 'apps/daemonsets': {
      const selector = obj.spec?.selector;
      if (!isObject(selector) || (Object.keys(selector.matchLabels ?? {}).length === 0 && ((selector.matchExpressions as unknown[] | undefined) ?? []).length === 0)) {
        causes.push({ reason: 'FieldValueRequired', field: 'spec.selector', message: 'Required value' });
      } else if (!labelSelectorMatches(selector, obj.spec?.template?.metadata?.labels ?? {})) {
        causes.push({ reason: 'FieldValueInvalid', field: 'spec.template.metadata.labels', message: `Invalid value: ${goMap(obj.spec?.template?.metadata?.labels ?? {})}: \`selector\` does not match template \`labels\`` });
      }
      if (obj.spec?.replicas !== undefined && !(Number.isInteger(obj.spec.replicas) && obj.spec.replicas >= 0)) {
        causes.push({ reason: 'FieldValueInvalid', field: 'spec.replicas', message: `Invalid value: ${obj.spec.replicas}: must be greater than or equal to 0` });
      }
      break;
    }
    case 'apiextensions.k8s.io/customresourcedefinitions': {
      const spec = obj.spec ?? {};
      const expected = `${spec.names?.plural}.${spec.group}`;
      if (name !== expected) causes.push({ reason: 'FieldValueInvalid', field: 'metadata.name', message: `Invalid value: "${name}": must be spec.names.plural+"."+spec.group` });
      const versions = Array.isArray(spec.versions) ? spec.versions : [];
      if (versions.length === 0) causes.push({ reason: 'FieldValueRequired', field: 'spec.versions', message: 'Required value: must have exactly one version marked as storage version' });
      else if (versions.filter((v: Obj) => v.storage).length !== 1) causes.push({ reason: 'FieldValueInvalid', field: 'spec.versions', message: `Invalid value: ${JSON.stringify(versions.map((v: Obj) => v.name))}: must have exactly one version marked as storage version` });
      if (spec.scope !== 'Namespaced' && spec.scope !== 'Cluster') causes.push({ reason: 'FieldValueNotSupported', field: 'spec.scope', message: `Unsupported value: "${spec.scope ?? ''}": supported values: "Cluster", "Namespaced"` });
      if (!spec.names?.kind) causes.push({ reason: 'FieldValueRequired', field: 'spec.names.kind', message: 'Required value' });
      break;
    }
  }
  return causes;
}

export function invalidError(type: ResourceType, name: string, causes: StatusCause[]) {
  return invalid(type.group, type.kind, name, causes);
}

/** metadata.generation moves when anything but metadata and status changes. */
export function specChanged(obj: Obj, old: Obj): boolean {
  const strip = (o: Obj) => {
    const { metadata: _m, status: _s, apiVersion: _a, kind: _k, ...rest } = o;
    return JSON.stringify(rest);
  };
  return strip(obj) !== strip(old);
}

export function apiVersionOf(type: ResourceType, version: string): string {
  return groupVersion(type.group, version);
}

function goMap(labels: Record<string, string>): string {
  return `map[string]string{${Object.entries(labels)
    .map(([k, v]) => `"${k}":"${v}"`)
    .join(', ')}}`;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
function defaultPodSpec(spec: any): void {
  if (!isObject(spec)) return;
  spec.restartPolicy ??= 'Always';
  spec.dnsPolicy ??= 'ClusterFirst';
  spec.schedulerName ??= 'default-scheduler';
  spec.terminationGracePeriodSeconds ??= 30;
  spec.securityContext ??= {};
  spec.serviceAccountName ??= spec.serviceAccount ?? 'default';
  spec.serviceAccount ??= spec.serviceAccountName;
  for (const list of ['containers', 'initContainers']) {
    for (const c of Array.isArray(spec[list]) ? spec[list] : []) {
      if (!isObject(c)) continue;
      const image = String(c.image ?? '');
      c.imagePullPolicy ??= image.endsWith(':latest') || !/:[^/]+$/.test(image) ? 'Always' : 'IfNotPresent';
      c.terminationMessagePath ??= '/dev/termination-log';
      c.terminationMessagePolicy ??= 'File';
      c.resources ??= {};
      for (const p of Array.isArray(c.ports) ? c.ports : []) if (isObject(p)) p.protocol ??= 'TCP';
    }
  }
}

function defaultService(obj: Obj, ips: ClusterIpAllocator): void {
  const spec = (obj.spec ??= {});
  spec.type ??= 'ClusterIP';
  spec.sessionAffinity ??= 'None';
  if (spec.type !== 'ExternalName') {
    if (spec.clusterIP === undefined || spec.clusterIP === '') spec.clusterIP = ips.allocate();
    else if (spec.clusterIP !== 'None') ips.reserve(spec.clusterIP);
    spec.clusterIPs ??= [spec.clusterIP];
    spec.ipFamilies ??= ['IPv4'];
    spec.ipFamilyPolicy ??= 'SingleStack';
    spec.internalTrafficPolicy ??= 'Cluster';
  }
  defaultServicePorts(spec);
  if (spec.type === 'NodePort' || spec.type === 'LoadBalancer') {
    for (const p of spec.ports ?? []) if (isObject(p)) p.nodePort ??= ips.nodePort();
    spec.externalTrafficPolicy ??= 'Cluster';
  }
  obj.status = { loadBalancer: {} };
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
function defaultServicePorts(spec: any): void {
  for (const p of Array.isArray(spec.ports) ? spec.ports : []) {
    if (!isObject(p)) continue;
    p.protocol ??= 'TCP';
    if (spec.clusterIP !== 'None' || p.targetPort === undefined) p.targetPort ??= p.port;
  }
}

function foldStringData(obj: Obj): void {
  if (!isObject(obj.stringData)) return;
  obj.data = { ...(obj.data ?? {}) };
  for (const [k, v] of Object.entries(obj.stringData)) obj.data[k] = Buffer.from(String(v)).toString('base64');
  delete obj.stringData;
}

function crdStatus(crd: Obj, old?: Obj): Obj {
  // A condition that stays True keeps its transition time (no transition happened).
  const since = (type: string) => (old?.conditions ?? []).find((c: Obj) => c.type === type && c.status === 'True')?.lastTransitionTime;
  const stamp = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const storage = (crd.spec?.versions ?? []).find((v: Obj) => v.storage)?.name;
  const stored: string[] = [...(old?.storedVersions ?? [])];
  if (storage && !stored.includes(storage)) stored.push(storage);
  return {
    acceptedNames: { ...(crd.spec?.names ?? {}), singular: crd.spec?.names?.singular ?? '', listKind: crd.spec?.names?.listKind ?? `${crd.spec?.names?.kind}List` },
    conditions: [
      { type: 'NamesAccepted', status: 'True', lastTransitionTime: since('NamesAccepted') ?? stamp, reason: 'NoConflicts', message: 'no conflicts found' },
      { type: 'Established', status: 'True', lastTransitionTime: since('Established') ?? stamp, reason: 'InitialNamesAccepted', message: 'the initial names have been accepted' },
    ],
    storedVersions: stored,
  };
}

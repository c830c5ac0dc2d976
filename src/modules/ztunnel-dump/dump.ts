import { DumpFields, fieldPath, JsonObject } from './fields';

/**
 * A ztunnel (node proxy) admin `/config_dump`, as ztunnel serves it: camelCase JSON with
 * `workloads` and `services` (objects keyed by `<network>/<address>`, or lists in older
 * versions), `policies`, `certificates`, `workloadState` (per pod UID: its connections), and
 * `staticConfig`, `version`, `config`. Each entry keeps its JSON as read (`raw`) for
 * `-o json|yaml`, beside the fields the tables use.
 */
export interface ZtunnelDump {
  /** Where the dump came from, for messages: `ztunnel config dump <file>` or the pod. */
  source: string;
  /** The whole dump as parsed. */
  raw: JsonObject;
  workloads: Workload[];
  services: Service[];
  policies: Policy[];
  certificates: Certificates[];
  workloadStates: WorkloadState[];
}

export interface Workload {
  uid: string;
  name: string;
  namespace: string;
  node: string;
  protocol: string;
  status: string;
  hostname: string;
  workloadIps: string[];
  /** The waypoint's `destination` (`<network>/<address>` or `<namespace>/<hostname>`); undefined without one. */
  waypoint?: string;
  raw: JsonObject;
}

export interface Service {
  name: string;
  namespace: string;
  hostname: string;
  /** `<network>/<address>` each. */
  vips: string[];
  waypoint?: string;
  /** The workload UID of each endpoint. */
  endpointWorkloadUids: string[];
  raw: JsonObject;
}

export interface Policy {
  name: string;
  namespace: string;
  action: string;
  scope: string;
  raw: JsonObject;
}

export interface Cert {
  serialNumber: string;
  validFrom: string;
  expirationTime: string;
}

export interface Certificates {
  identity: string;
  state: string;
  /** The leaf and its intermediates; in older dumps, the root last. */
  certChain: Cert[];
  rootCerts: Cert[];
  raw: JsonObject;
}

export interface Connection {
  src: string;
  originalDst: string;
  actualDst: string;
  protocol: string;
}

export interface WorkloadState {
  name: string;
  namespace: string;
  inbound: Connection[];
  outbound: Connection[];
  raw: JsonObject;
}

/**
 * A top-level member, matched as the reference's Go decoder matches struct fields: the exact
 * name first, else any spelling in another letter case (`workloadstate`).
 */
function member(dump: JsonObject, name: string): { key: string; value: unknown } {
  if (name in dump) return { key: name, value: dump[name] };
  const key = Object.keys(dump).find((k) => k.toLowerCase() === name.toLowerCase());
  return key === undefined ? { key: name, value: undefined } : { key, value: dump[key] };
}

function waypointOf(f: DumpFields, parent: JsonObject, path: string): string | undefined {
  const waypoint = f.optObject(parent.waypoint, fieldPath(path, 'waypoint'));
  return waypoint && f.string(waypoint, 'destination', fieldPath(path, 'waypoint'));
}

function readWorkload(f: DumpFields, value: unknown, path: string): Workload {
  const w = f.entry(value, path);
  const s = (key: string) => f.string(w, key, path);
  return {
    uid: s('uid'),
    name: s('name'),
    namespace: s('namespace'),
    node: s('node'),
    protocol: s('protocol'),
    status: s('status'),
    hostname: s('hostname'),
    workloadIps: f.stringList(w, 'workloadIps', path),
    waypoint: waypointOf(f, w, path),
    raw: w,
  };
}

function readService(f: DumpFields, value: unknown, path: string): Service {
  const svc = f.entry(value, path);
  const endpointsPath = fieldPath(path, 'endpoints');
  const endpointWorkloadUids = f.collection(svc.endpoints, endpointsPath).map((e) => f.string(f.entry(e.value, e.path), 'workloadUid', e.path));
  return {
    name: f.string(svc, 'name', path),
    namespace: f.string(svc, 'namespace', path),
    hostname: f.string(svc, 'hostname', path),
    vips: f.stringList(svc, 'vips', path),
    waypoint: waypointOf(f, svc, path),
    endpointWorkloadUids,
    raw: svc,
  };
}

function readPolicy(f: DumpFields, value: unknown, path: string): Policy {
  const p = f.entry(value, path);
  return { name: f.string(p, 'name', path), namespace: f.string(p, 'namespace', path), action: f.string(p, 'action', path), scope: f.string(p, 'scope', path), raw: p };
}

function readCerts(f: DumpFields, parent: JsonObject, key: string, path: string): Cert[] {
  const at = fieldPath(path, key);
  return f.list(parent[key], at).map((value, i) => {
    const cert = f.entry(value, fieldPath(at, i));
    const s = (k: string) => f.string(cert, k, fieldPath(at, i));
    return { serialNumber: s('serialNumber'), validFrom: s('validFrom'), expirationTime: s('expirationTime') };
  });
}

function readCertificates(f: DumpFields, value: unknown, path: string): Certificates {
  const c = f.entry(value, path);
  return {
    identity: f.string(c, 'identity', path),
    state: f.string(c, 'state', path),
    certChain: readCerts(f, c, 'certChain', path),
    rootCerts: readCerts(f, c, 'rootCerts', path),
    raw: c,
  };
}

function readConnections(f: DumpFields, parent: JsonObject, key: string, path: string): Connection[] {
  const at = fieldPath(path, key);
  return f.list(parent[key], at).map((value, i) => {
    const c = f.entry(value, fieldPath(at, i));
    const s = (k: string) => f.string(c, k, fieldPath(at, i));
    return { src: s('src'), originalDst: s('originalDst'), actualDst: s('actualDst'), protocol: s('protocol') };
  });
}

function readWorkloadState(f: DumpFields, value: unknown, path: string): WorkloadState {
  const state = f.entry(value, path);
  const infoPath = fieldPath(path, 'info');
  const info = f.object(state.info, infoPath);
  const connectionsPath = fieldPath(path, 'connections');
  const connections = f.object(state.connections, connectionsPath);
  return {
    name: f.string(info, 'name', infoPath),
    namespace: f.string(info, 'namespace', infoPath),
    inbound: readConnections(f, connections, 'inbound', connectionsPath),
    outbound: readConnections(f, connections, 'outbound', connectionsPath),
    raw: state,
  };
}

/**
 * The dump's parts the commands show, checked field by field; `source` names the file or pod
 * in every error.
 */
export function toZtunnelDump(data: unknown, source: string): ZtunnelDump {
  const f = new DumpFields(source);
  if (data === null || typeof data !== 'object' || Array.isArray(data)) f.fail('the dump', data, 'an object with "workloads", "services", "policies" and "certificates": is it a ztunnel /config_dump?');
  const dump = data as JsonObject;
  const read = <T>(name: string, one: (f: DumpFields, value: unknown, path: string) => T): T[] => {
    const { key, value } = member(dump, name);
    return f.collection(value, key).map((e) => one(f, e.value, e.path));
  };
  const states = member(dump, 'workloadState');
  if (states.value !== undefined && states.value !== null) f.optObject(states.value, states.key);
  return {
    source,
    raw: dump,
    workloads: read('workloads', readWorkload),
    services: read('services', readService),
    policies: read('policies', readPolicy),
    certificates: read('certificates', readCertificates),
    workloadStates: read('workloadState', readWorkloadState),
  };
}

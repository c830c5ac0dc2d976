import { JsonMap, Pod } from './pod';

/**
 * The orchestrator's Go types leave out the empty values (0, "", false) of their non-pointer
 * `omitempty` fields when they serialize; pointer fields (runAsUser, privileged...) keep them.
 * The injected pod goes through that round trip in the incumbent, so the same fields are
 * dropped here: `initialDelaySeconds: 0` vanishes, `runAsUser: 0` stays.
 */

const PROBE = ['initialDelaySeconds', 'timeoutSeconds', 'periodSeconds', 'successThreshold', 'failureThreshold'];
const HTTP_GET = ['path', 'host', 'scheme'];
const CONTAINER = ['image', 'workingDir', 'terminationMessagePath', 'terminationMessagePolicy', 'imagePullPolicy', 'stdin', 'stdinOnce', 'tty'];
const PORT = ['name', 'hostPort', 'protocol', 'hostIP'];
const VOLUME_MOUNT = ['readOnly', 'subPath', 'subPathExpr'];
const POD_SPEC = [
  'restartPolicy',
  'dnsPolicy',
  'serviceAccountName',
  'serviceAccount',
  'nodeName',
  'hostNetwork',
  'hostPID',
  'hostIPC',
  'hostname',
  'subdomain',
  'schedulerName',
  'priorityClassName',
];
const OBJECT_META = ['name', 'generateName', 'namespace', 'selfLink', 'uid', 'resourceVersion', 'generation'];

const isMap = (v: unknown): v is JsonMap => typeof v === 'object' && v !== null && !Array.isArray(v);
const isEmpty = (v: unknown) => v === 0 || v === '' || v === false;

function drop(obj: unknown, keys: readonly string[]): void {
  if (!isMap(obj)) return;
  for (const k of keys) if (isEmpty(obj[k])) delete obj[k];
}

function handler(h: unknown): void {
  if (!isMap(h)) return;
  drop(h.httpGet, HTTP_GET);
}

function container(c: unknown): void {
  if (!isMap(c)) return;
  drop(c, CONTAINER);
  for (const p of Array.isArray(c.ports) ? c.ports : []) drop(p, PORT);
  for (const e of Array.isArray(c.env) ? c.env : []) drop(e, ['value']);
  for (const m of Array.isArray(c.volumeMounts) ? c.volumeMounts : []) drop(m, VOLUME_MOUNT);
  for (const probe of [c.readinessProbe, c.livenessProbe, c.startupProbe]) {
    drop(probe, PROBE);
    handler(probe);
  }
  if (isMap(c.lifecycle)) {
    handler(c.lifecycle.preStop);
    handler(c.lifecycle.postStart);
  }
}

/** Drops the empty values the orchestrator's serializer would leave out, in place. */
export function omitEmpty<T extends Pod>(pod: T): T {
  drop(pod.metadata, OBJECT_META);
  const spec = pod.spec;
  if (!spec) return pod;
  drop(spec, POD_SPEC);
  for (const list of [spec.containers, spec.initContainers, spec.ephemeralContainers]) {
    for (const c of Array.isArray(list) ? list : []) container(c);
  }
  for (const v of spec.volumes ?? []) if (isMap(v.emptyDir)) drop(v.emptyDir, ['medium']);
  return pod;
}

import { goJSON } from './go-json';
import { Container, JsonMap, Pod, PROXY_CONTAINER } from './pod';

/**
 * Application probes rewritten to the agent: kubelet probes `/app-health/<container>/<kind>`
 * on the agent's status port and the agent runs the original probe (listed in
 * MESH_ORCH_APP_PROBERS) against the application, so probes work under mutual TLS.
 */

export const APP_PROBERS_ENV = 'MESH_ORCH_APP_PROBERS';
export const REWRITE_PROBES_ANNOTATION = 'sidecar.mesh.io/rewriteAppHTTPProbers';
export const STATUS_PORT_ANNOTATION = 'status.sidecar.mesh.io/port';
const INCLUDE_INBOUND = 'traffic.sidecar.mesh.io/includeInboundPorts';

const isMap = (v: unknown): v is JsonMap => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Go's strconv.ParseBool. */
export function parseGoBool(v: string): boolean | undefined {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(v)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(v)) return false;
  return undefined;
}

export function shouldRewriteProbes(annotations: Record<string, string> | undefined, fromValues: boolean): boolean {
  const v = annotations?.[REWRITE_PROBES_ANNOTATION];
  if (v !== undefined) {
    const b = parseGoBool(v);
    if (b !== undefined) return b;
  }
  return fromValues;
}

function proberURLs(name: string) {
  return {
    readyz: `/app-health/${name}/readyz`,
    livez: `/app-health/${name}/livez`,
    startupz: `/app-health/${name}/startupz`,
    prestopz: `/app-lifecycle/${name}/prestopz`,
    poststartz: `/app-lifecycle/${name}/poststartz`,
  };
}

/** An HTTPGetAction's JSON in Go's field order (path, port, host, scheme, httpHeaders). */
function httpGetJSON(a: JsonMap): JsonMap {
  const out: JsonMap = {};
  if (a.path) out.path = a.path;
  out.port = a.port ?? 0;
  if (a.host) out.host = a.host;
  if (a.scheme) out.scheme = a.scheme;
  if (Array.isArray(a.httpHeaders) && a.httpHeaders.length > 0) out.httpHeaders = a.httpHeaders;
  return out;
}

interface Prober {
  httpGet?: JsonMap;
  tcpSocket?: JsonMap;
  grpc?: JsonMap;
  timeoutSeconds?: number;
}

function proberOf(handler: unknown, withTimeout: boolean): Prober | undefined {
  if (!isMap(handler)) return undefined;
  const timeout = withTimeout && typeof handler.timeoutSeconds === 'number' && handler.timeoutSeconds !== 0 ? handler.timeoutSeconds : undefined;
  const withT = (p: Prober): Prober => (timeout !== undefined ? { ...p, timeoutSeconds: timeout } : p);
  if (isMap(handler.httpGet)) return withT({ httpGet: httpGetJSON(handler.httpGet) });
  if (isMap(handler.tcpSocket)) {
    const t: JsonMap = { port: handler.tcpSocket.port ?? 0 };
    if (handler.tcpSocket.host) t.host = handler.tcpSocket.host;
    return withT({ tcpSocket: t });
  }
  if (withTimeout && isMap(handler.grpc)) {
    const g: JsonMap = { port: handler.grpc.port ?? 0 };
    if (handler.grpc.service !== undefined && handler.grpc.service !== null) g.service = handler.grpc.service;
    return withT({ grpc: g });
  }
  return undefined;
}

/** The inbound ports probes may target (empty: all), from the traffic annotations. */
function includedPorts(pod: Pod): Set<number> {
  const annotations = pod.metadata?.annotations;
  const ports = new Set<number>();
  if (!annotations) return ports;
  const include = annotations[INCLUDE_INBOUND];
  if (include !== undefined && include !== '') {
    if (include === '*') return ports;
    for (const p of include.split(',')) if (/^\s*\d+\s*$/.test(p)) ports.add(Number(p));
    return ports;
  }
  // Exclusions from "all" leave "all" (an empty set): the incumbent's behaviour.
  return ports;
}

/** Named ports resolved to the container's port numbers; probes to ports outside the included set dropped. */
function resolvePort(p: Prober, ports: Set<number>, container: Container): Prober | undefined {
  if (p.grpc) return ports.size > 0 && !ports.has(Number(p.grpc.port)) ? undefined : p;
  const action = p.httpGet ?? p.tcpSocket;
  if (!action) return undefined;
  const port = action.port;
  let n: number;
  if (typeof port === 'string') {
    const named = (Array.isArray(container.ports) ? container.ports : []).find((cp) => isMap(cp) && cp.name === port) as JsonMap | undefined;
    n = named && typeof named.containerPort === 'number' ? named.containerPort : /^[+-]?\d+$/.test(port) ? Number(port) : 0;
  }
  else n = typeof port === 'number' ? port : 0;
  if (ports.size > 0 && !ports.has(n)) return undefined;
  action.port = n;
  return p;
}

/** MESH_ORCH_APP_PROBERS for the pod's containers ('' when there is nothing to probe). */
export function dumpAppProbers(pod: Pod): string {
  const out: Record<string, Prober> = {};
  const ports = includedPorts(pod);
  for (const c of [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])]) {
    if (c.name === PROXY_CONTAINER) continue;
    const urls = proberURLs(c.name);
    const add = (url: string, handler: unknown, withTimeout: boolean) => {
      const p = proberOf(structuredClone(handler), withTimeout);
      const resolved = p && resolvePort(p, ports, c);
      if (resolved) out[url] = resolved;
    };
    add(urls.readyz, c.readinessProbe, true);
    add(urls.livez, c.livenessProbe, true);
    add(urls.startupz, c.startupProbe, true);
    if (isMap(c.lifecycle)) {
      add(urls.prestopz, c.lifecycle.preStop, false);
      add(urls.poststartz, c.lifecycle.postStart, false);
    }
  }
  const keys = Object.keys(out).sort();
  if (keys.length === 0) return '';
  return goJSON(Object.fromEntries(keys.map((k) => [k, out[k]])));
}

/** The new probers merged into an existing MESH_ORCH_APP_PROBERS (existing entries win), or appended. */
export function mergeOrAppendProbers(previouslyInjected: boolean, env: NonNullable<Container['env']>, probers: string): NonNullable<Container['env']> {
  if (previouslyInjected) {
    const at = env.findIndex((e) => e.name === APP_PROBERS_ENV);
    if (at >= 0) {
      let existing: Record<string, unknown>;
      let fresh: Record<string, unknown>;
      try {
        existing = JSON.parse(env[at].value ?? '');
        fresh = JSON.parse(probers);
      } catch {
        return env;
      }
      if (!isMap(existing) || !isMap(fresh)) return env;
      const merged = { ...fresh, ...existing };
      const keys = Object.keys(merged).sort();
      const copy = [...env];
      copy[at] = { name: APP_PROBERS_ENV, value: goJSON(Object.fromEntries(keys.map((k) => [k, merged[k]]))) };
      return copy;
    }
  }
  return [...env, { name: APP_PROBERS_ENV, value: probers }];
}

function rewriteAction(action: JsonMap, url: string, port: number): void {
  action.port = port;
  action.path = url;
  // Kubelet talks HTTP to the agent, which talks HTTPS to the application.
  if (action.scheme === 'HTTPS') action.scheme = 'HTTP';
}

function convertHandler(handler: unknown, url: string, port: number, grpcToo: boolean): JsonMap | undefined {
  if (!isMap(handler)) return undefined;
  const h = structuredClone(handler);
  if (isMap(h.httpGet)) {
    rewriteAction(h.httpGet, url, port);
    return h;
  }
  if (isMap(h.tcpSocket) || (grpcToo && isMap(h.grpc))) {
    h.httpGet = {};
    rewriteAction(h.httpGet as JsonMap, url, port);
    delete h.tcpSocket;
    delete h.grpc;
    return h;
  }
  return undefined;
}

/** Points the application containers' probes at the agent's status port. */
export function rewriteProbes(pod: Pod, defaultStatusPort: number): void {
  let statusPort = defaultStatusPort;
  const annotated = pod.metadata?.annotations?.[STATUS_PORT_ANNOTATION];
  if (annotated !== undefined) statusPort = /^[+-]?\d+$/.test(annotated) ? Number(annotated) : 0;
  for (const list of [pod.spec?.containers, pod.spec?.initContainers]) {
    for (const c of list ?? []) {
      if (c.name === PROXY_CONTAINER) continue;
      const urls = proberURLs(c.name);
      const ready = convertHandler(c.readinessProbe, urls.readyz, statusPort, true);
      if (ready) c.readinessProbe = ready;
      const live = convertHandler(c.livenessProbe, urls.livez, statusPort, true);
      if (live) c.livenessProbe = live;
      const startup = convertHandler(c.startupProbe, urls.startupz, statusPort, true);
      if (startup) c.startupProbe = startup;
      if (isMap(c.lifecycle)) {
        const pre = convertHandler(c.lifecycle.preStop, urls.prestopz, statusPort, false);
        if (pre) c.lifecycle.preStop = pre;
        const post = convertHandler(c.lifecycle.postStart, urls.poststartz, statusPort, false);
        if (post) c.lifecycle.postStart = post;
      }
    }
  }
}

/**
 * `MESH_ORCH_APP_PROBERS`: the application's own probes, rewritten by the injector to go
 * through the agent's status port (so they work when mutual TLS would refuse the kubelet), in
 * the incumbent's `ISTIO_KUBE_APP_PROBERS` form: a JSON object from status-port path to probe,
 *
 *   {"/app-health/web/livez":   {"httpGet": {"path": "/healthz", "port": 8080, "scheme": "HTTP",
 *                                            "httpHeaders": [{"name": "x", "value": "y"}]},
 *                                "timeoutSeconds": 1},
 *    "/app-health/web/readyz":  {"tcpSocket": {"port": 8080}},
 *    "/app-health/grpc/livez":  {"grpc": {"port": 9090, "service": "echo"}}}
 *
 * Paths are `/app-health/<container>/(livez|readyz|startupz)`; each probe has exactly one of
 * httpGet, tcpSocket or grpc, with a numeric port (the injector resolves named ports). Other
 * probe fields the orchestrator knows (periodSeconds, failureThreshold...) are the kubelet's
 * business and are ignored here.
 */
import { UserError } from '../../shared/user-error';

export class AppProbersError extends UserError {}

export interface HttpHeader {
  name: string;
  value: string;
}

export interface HttpGetAction {
  path: string;
  port: number;
  /** The address to probe; default the status server's application host. */
  host?: string;
  scheme: 'HTTP' | 'HTTPS';
  httpHeaders: HttpHeader[];
}

export interface TcpSocketAction {
  port: number;
  host?: string;
}

export interface GrpcAction {
  port: number;
  /** The service name sent in the health check; empty = the server as a whole. */
  service: string;
}

export type AppProber = { timeoutSeconds: number } & (
  | { kind: 'httpGet'; httpGet: HttpGetAction }
  | { kind: 'tcpSocket'; tcpSocket: TcpSocketAction }
  | { kind: 'grpc'; grpc: GrpcAction }
);

/** Probes by status-port path. */
export type AppProbers = ReadonlyMap<string, AppProber>;

export const APP_PROBER_PATH = /^\/app-health\/[^/]+\/(livez|readyz|startupz)$/;

/** The orchestrator's default probe timeout. */
const DEFAULT_TIMEOUT_SECONDS = 1;

/** Parses the setting's value (absent or blank = no probes). Throws AppProbersError naming MESH_ORCH_APP_PROBERS. */
export function parseAppProbers(raw: string | undefined): AppProbers {
  const probers = new Map<string, AppProber>();
  if (raw === undefined || raw.trim() === '') return probers;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (e) {
    throw new AppProbersError(`MESH_ORCH_APP_PROBERS: not valid JSON: ${(e as Error).message}`);
  }
  if (!isObject(parsed)) throw new AppProbersError('MESH_ORCH_APP_PROBERS: must be a JSON object from status-port path (/app-health/<container>/livez) to probe');
  for (const [path, value] of Object.entries(parsed)) probers.set(path, parseProber(path, value));
  return probers;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function parseProber(path: string, value: unknown): AppProber {
  const fail = (what: string): never => {
    throw new AppProbersError(`MESH_ORCH_APP_PROBERS: ${JSON.stringify(path)}: ${what}`);
  };
  if (!APP_PROBER_PATH.test(path)) fail(`the path must have the form /app-health/<container>/livez, /readyz or /startupz`);
  if (!isObject(value)) return fail('must be an object with one of httpGet, tcpSocket or grpc');
  const actions = (['httpGet', 'tcpSocket', 'grpc'] as const).filter((k) => value[k] !== undefined && value[k] !== null);
  if (actions.length !== 1) {
    fail(actions.length === 0 ? 'has no httpGet, tcpSocket or grpc: one of them is needed' : `has ${actions.join(' and ')}: only one of httpGet, tcpSocket or grpc may be given`);
  }
  let timeoutSeconds = DEFAULT_TIMEOUT_SECONDS;
  if (value.timeoutSeconds !== undefined && value.timeoutSeconds !== null) {
    if (typeof value.timeoutSeconds !== 'number' || !Number.isInteger(value.timeoutSeconds) || value.timeoutSeconds < 0) fail('timeoutSeconds must be a whole number of seconds');
    // 0 is the orchestrator's "unset", which means its default.
    timeoutSeconds = (value.timeoutSeconds as number) || DEFAULT_TIMEOUT_SECONDS;
  }
  const kind = actions[0];
  const action = value[kind];
  if (!isObject(action)) return fail(`${kind} must be an object`);
  const port = (): number => {
    const p = action.port;
    if (typeof p !== 'number' || !Number.isInteger(p) || p < 1 || p > 65535) {
      return fail(`${kind}.port must be a port number from 1 to 65535 (named ports are resolved by the injector), not ${JSON.stringify(p)}`);
    }
    return p;
  };
  const optionalString = (key: string): string | undefined => {
    const v = action[key];
    if (v === undefined || v === null || v === '') return undefined;
    if (typeof v !== 'string') return fail(`${kind}.${key} must be a string`);
    return v;
  };
  if (kind === 'tcpSocket') return { kind, timeoutSeconds, tcpSocket: { port: port(), host: optionalString('host') } };
  if (kind === 'grpc') return { kind, timeoutSeconds, grpc: { port: port(), service: optionalString('service') ?? '' } };
  const scheme = (optionalString('scheme') ?? 'HTTP').toUpperCase();
  if (scheme !== 'HTTP' && scheme !== 'HTTPS') fail(`httpGet.scheme must be HTTP or HTTPS, not ${JSON.stringify(action.scheme)}`);
  const headers = action.httpHeaders ?? [];
  if (!Array.isArray(headers)) return fail('httpGet.httpHeaders must be a list of {"name": ..., "value": ...}');
  const httpHeaders = headers.map((h, i) => {
    if (!isObject(h) || typeof h.name !== 'string' || h.name === '' || typeof (h.value ?? '') !== 'string') {
      return fail(`httpGet.httpHeaders[${i}] must be {"name": "<header>", "value": "<text>"}`);
    }
    return { name: h.name, value: (h.value as string | undefined) ?? '' };
  });
  const rawPath = optionalString('path') ?? '/';
  return {
    kind,
    timeoutSeconds,
    httpGet: { path: rawPath.startsWith('/') ? rawPath : `/${rawPath}`, port: port(), host: optionalString('host'), scheme: scheme as 'HTTP' | 'HTTPS', httpHeaders },
  };
}

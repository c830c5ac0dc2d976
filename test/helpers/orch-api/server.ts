import * as fs from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import * as path from 'node:path';
import type { Duplex } from 'node:stream';
import { randomBytes } from 'node:crypto';
import * as k8s from '@kubernetes/client-node';
import { jwtVerify, importJWK } from 'jose';
import { AccessRules } from './access-review';
import { type WebhookCall, WebhookAdmission } from './admission';
import { watchCrds } from './crds';
import { ApiError, badRequest, internal, pathNotFound, statusFor } from './errors';
import { type Operations as OperationsType, Operations } from './operations';
import { OwnerIndex } from './owners';
import { PodLogs } from './pod-logs';
import { type ForwardTarget, portForwardTarget, PortForwards } from './portforward';
import { ResourceRegistry } from './resources';
import { requestBodies, type RouteInfo, Router, sendStatus } from './router';
import { Store, type Obj } from './store';
import { ClusterIpAllocator } from './strategies';
import { makeServingIdentity, type ServingIdentity, TokenSigner } from './tls';
import { WatchHub } from './watch';
import { ClusterSimulation, type PodIpAllocator } from './controllers';

/*
 * The in-process orchestrator API server: HTTPS on 127.0.0.1 with a test CA, bearer-token
 * authentication, and the REST protocol of the real one (see router.ts and friends). Tests reach
 * it through @kubernetes/client-node or kubectl with kubeConfig()/writeKubeconfigFile(); they may
 * also set up and inspect state directly, inject faults and restart it.
 */

export interface StartOptions {
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0 (any free port). */
  port?: number;
  /** Changes kept for watches to resume from; resuming from an older resourceVersion answers 410. Default 100000. */
  historyLimit?: number;
  /** Run the simulated kubelet and controllers (Deployments, pods, EndpointSlices, namespaces). Default true. */
  simulateCluster?: boolean;
  /** How often watches that allow bookmarks get one. Default 1000 ms. */
  bookmarkIntervalMs?: number;
  /** Chooses a pod's IP (the `test.orch/pod-ip` annotation wins over it). Default 10.244.0.1, 10.244.0.2, ... */
  podIpAllocator?: PodIpAllocator;
  /**
   * How long a deleted pod on the node stays Terminating (deletionTimestamp set, its endpoints
   * `terminating`) before the kubelet removes it; gracePeriodSeconds=0 removes it at once.
   * Default 0: pods go at once.
   */
  podTerminationMs?: number;
  /** The version `/version` reports, `v<major>.<minor>.<patch>`. Default v1.32.0. */
  serverVersion?: string;
}

export interface RequestLogEntry {
  readonly method: string;
  readonly path: string;
  readonly query: Readonly<Record<string, string>>;
  readonly at: number;
  /** The API verb (get, list, watch, create, update, patch, delete, deletecollection) for resource requests. */
  readonly verb?: string;
  /** The resource (`pods`, `pods/status`, `leases`) for resource requests. */
  readonly resource?: string;
  readonly status?: number;
  /** The request's Content-Type (parameters dropped), when it has one. */
  readonly contentType?: string;
  /**
   * The request body as the server read it: parsed JSON, else the text (YAML); undefined when
   * empty, protobuf, or not read (a request refused before its body was looked at, e.g. by an
   * injected failure).
   */
  readonly body?: unknown;
  /** The impersonation headers of the request (`Impersonate-User`, one group per `Impersonate-Group` line, `Impersonate-Uid`), when it had any. */
  readonly impersonate?: Impersonation;
}

export interface Impersonation {
  readonly user?: string;
  readonly groups?: readonly string[];
  readonly uid?: string;
}

/** Pods' ports as the port-forward subresource reaches them (there is no cluster network). */
export interface PortForwardRegistry {
  /** Routes port `podPort` of pod `namespace/pod` to the local address `target` (e.g. a test's server on 127.0.0.1). */
  register(namespace: string, pod: string, podPort: number, target: ForwardTarget): void;
  /** Forgets one port of the pod, or all its ports without `podPort`; forwards already open stay. */
  unregister(namespace: string, pod: string, podPort?: number): void;
  /** Port-forward connections (WebSockets) open now. */
  readonly active: number;
  /** TCP connections toward registered addresses open now. */
  readonly activeConnections: number;
}

export interface RequestFilter {
  verb?: string;
  resource?: string;
}

export interface FailureOptions {
  /** Fail for this long (ms). */
  forMs?: number;
  /** Fail this many requests. */
  count?: number;
  /** Only requests whose `METHOD /path?query` (or `/path?query`) matches. */
  match?: RegExp;
}

interface Failure {
  readonly status: number;
  readonly until?: number;
  remaining?: number;
  readonly match?: RegExp;
}

/** Objects as tests write them. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyObject = any;

const NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];
const PUBLIC_PATHS = new Set(['/healthz', '/livez', '/readyz', '/version']);

export class OrchApiServer {
  readonly token = randomBytes(24).toString('base64url');
  /** `<namespace>/<name>` of a Service -> base URL of the webhook server behind it (there is no cluster network). */
  readonly serviceEndpoints: Map<string, string>;
  /** What SelfSubjectAccessReviews answer: everything allowed until a test denies some (`access.deny({verb, resource})`). */
  readonly access = new AccessRules();
  private readonly log: RequestLogEntry[] = [];
  private readonly failures: Failure[] = [];
  private readonly sockets = new Set<Socket>();
  private server?: https.Server;
  private port: number;
  private readonly host: string;
  private readonly store: Store;
  private readonly registry = new ResourceRegistry();
  private readonly hub: WatchHub;
  private readonly admission: WebhookAdmission;
  private readonly ops: OperationsType;
  private readonly router: Router;
  private readonly simulation?: ClusterSimulation;
  private readonly forwards: PortForwards;
  /** `pods/<name>/log`: set a container's log text with `podLogs.set(...)`. */
  readonly podLogs = new PodLogs();
  private stopped = false;

  private constructor(
    private readonly identity: ServingIdentity,
    private readonly signer: TokenSigner,
    options: StartOptions,
  ) {
    this.host = options.host ?? '127.0.0.1';
    this.port = options.port ?? 0;
    this.store = new Store(options.historyLimit ?? 100_000);
    this.hub = new WatchHub(this.store, options.bookmarkIntervalMs ?? 1000);
    watchCrds(this.store, this.registry, (key) => this.hub.endType(key));
    this.admission = new WebhookAdmission(this.store);
    this.serviceEndpoints = this.admission.serviceEndpoints;
    this.ops = new Operations(this.store, this.admission, new ClusterIpAllocator(), new OwnerIndex(this.store));
    this.router = new Router({ store: this.store, registry: this.registry, ops: this.ops, hub: this.hub, signer: this.signer, serverAddress: () => `${this.host}:${this.port}`, access: this.access, serverVersion: options.serverVersion, podLogs: this.podLogs });
    this.forwards = new PortForwards(this.store);
    if (options.simulateCluster !== false) this.simulation = new ClusterSimulation(this.store, this.registry, this.ops, { podIpAllocator: options.podIpAllocator, podTerminationMs: options.podTerminationMs });
  }

  static async start(options: StartOptions = {}): Promise<OrchApiServer> {
    const [identity, signer] = await Promise.all([makeServingIdentity(), TokenSigner.create()]);
    const server = new OrchApiServer(identity, signer, options);
    for (const name of NAMESPACES) await server.ops.create(server.registry.byKind('v1', 'Namespace')!, 'v1', undefined, { metadata: { name } }, { admission: false });
    await server.simulation?.start();
    await server.listen();
    return server;
  }

  get url(): string {
    return `https://${this.host.includes(':') ? `[${this.host}]` : this.host}:${this.port}`;
  }

  get caPem(): string {
    return this.identity.caPem;
  }

  /** The current (latest) resourceVersion. */
  get resourceVersion(): string {
    return String(this.store.resourceVersion);
  }

  /** Watch streams open now. */
  get watchCount(): number {
    return this.hub.size;
  }

  /** Every admission webhook call made, in order. */
  get webhookCalls(): readonly WebhookCall[] {
    return this.admission.calls;
  }

  kubeConfig(): k8s.KubeConfig {
    const config = new k8s.KubeConfig();
    config.loadFromOptions({
      clusters: [{ name: 'orch-test', server: this.url, caData: Buffer.from(this.caPem).toString('base64'), skipTLSVerify: false }],
      users: [{ name: 'orch-test', token: this.token }],
      contexts: [{ name: 'orch-test', cluster: 'orch-test', user: 'orch-test' }],
      currentContext: 'orch-test',
    });
    return config;
  }

  /** Writes a kubeconfig for this server into `dir` (for kubectl --kubeconfig and --orchconfig); returns its path. */
  writeKubeconfigFile(dir: string): string {
    fs.mkdirSync(dir, { recursive: true });
    const file = path.join(dir, `orch-test-${this.port}.kubeconfig`);
    const text = [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      '- name: orch-test',
      '  cluster:',
      `    server: ${this.url}`,
      `    certificate-authority-data: ${Buffer.from(this.caPem).toString('base64')}`,
      'users:',
      '- name: orch-test',
      '  user:',
      `    token: ${this.token}`,
      'contexts:',
      '- name: orch-test',
      '  context:',
      '    cluster: orch-test',
      '    user: orch-test',
      'current-context: orch-test',
      '',
    ].join('\n');
    fs.writeFileSync(file, text, { mode: 0o600 });
    return file;
  }

  // ---- direct access (same storage and watch events; admission only when asked) ----

  async create(obj: AnyObject, opts: { admission?: boolean } = {}): Promise<AnyObject> {
    const { type, version } = this.typeOf(obj.apiVersion, obj.kind);
    const created = await this.ops.create(type, version, type.namespaced ? (obj.metadata?.namespace ?? 'default') : undefined, obj, { admission: opts.admission === true });
    return structuredClone(this.ops.asVersion(type, created, version));
  }

  get(apiVersion: string, kind: string, namespace: string | undefined, name: string): AnyObject | undefined {
    const { type, version } = this.typeOf(apiVersion, kind);
    const found = this.store.get(`${type.group}/${type.plural}`, type.namespaced ? (namespace ?? 'default') : '', name);
    return found && structuredClone(this.ops.asVersion(type, found, version));
  }

  list(apiVersion: string, kind: string, namespace?: string): AnyObject[] {
    const { type, version } = this.typeOf(apiVersion, kind);
    return this.store.items(`${type.group}/${type.plural}`, type.namespaced ? namespace : undefined).map((o) => structuredClone(this.ops.asVersion(type, o, version)));
  }

  /**
   * Replaces the object (resourceVersion checked when set); `status` is written too when the kind has
   * a status subresource. Taking the last finalizer off an object being deleted removes it.
   */
  async update(obj: AnyObject, opts: { admission?: boolean } = {}): Promise<AnyObject> {
    const { type, version } = this.typeOf(obj.apiVersion, obj.kind);
    const namespace = type.namespaced ? (obj.metadata?.namespace ?? 'default') : undefined;
    const name = obj.metadata?.name;
    const current = this.ops.get(type, namespace, name);
    const body = { ...obj, metadata: { ...obj.metadata, resourceVersion: obj.metadata?.resourceVersion ?? current.metadata.resourceVersion } };
    let updated = await this.ops.update(type, version, namespace, name, body, { admission: opts.admission === true });
    // An update taking the last finalizer off a deleted object removes it: no status left to write.
    const removed = !this.store.get(`${type.group}/${type.plural}`, namespace ?? '', name);
    if (type.subresources.includes('status') && obj.status !== undefined && !removed) {
      updated = await this.ops.update(type, version, namespace, name, { ...body, metadata: { ...body.metadata, resourceVersion: updated.metadata.resourceVersion } }, { admission: opts.admission === true }, 'status');
    }
    return structuredClone(this.ops.asVersion(type, updated, version));
  }

  async delete(apiVersion: string, kind: string, namespace: string | undefined, name: string): Promise<void> {
    const { type, version } = this.typeOf(apiVersion, kind);
    await this.ops.remove(type, version, type.namespaced ? (namespace ?? 'default') : undefined, name, {}, { admission: false });
  }

  readonly requests = {
    count: (filter: RequestFilter = {}): number => this.log.filter((r) => (!filter.verb || r.verb === filter.verb) && (!filter.resource || r.resource === filter.resource)).length,
    log: this.log as readonly RequestLogEntry[],
  };

  readonly faults = {
    /** Ends every open watch stream (clients must watch again). */
    dropWatches: (): void => this.hub.endAll(),
    /** Forgets the watch history: resuming from an older resourceVersion answers 410 Gone. */
    compact: (): void => this.store.compact(),
    /** Answers matching requests with a Status error of `status` for a while or a number of times. */
    failRequests: (status: number, opts: FailureOptions = {}): void => {
      this.failures.push({ status, until: opts.forMs !== undefined ? Date.now() + opts.forMs : undefined, remaining: opts.count, match: opts.match });
    },
    /** Stops failing requests. */
    clear: (): void => {
      this.failures.length = 0;
    },
  };

  /** `pods/<name>/portforward`: where each registered pod port really is, and the forwards open. */
  get portForward(): PortForwardRegistry {
    return this.forwards;
  }

  /** Sends a BOOKMARK to every watch that allows them, now. */
  sendBookmarks(): void {
    this.hub.sendBookmarks();
  }

  /**
   * Stops listening (cutting every connection and watch) and listens again on the same port, state
   * kept. `whileDown` runs in between (the server away: connections refused; direct access works),
   * e.g. to wait until clients notice.
   */
  async restart(whileDown?: () => unknown): Promise<void> {
    await this.close();
    try {
      await whileDown?.();
    } finally {
      await this.listen();
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.simulation?.stop();
    await this.close();
    this.hub.stop();
  }

  // ---- internals ----

  private typeOf(apiVersion: string, kind: string) {
    const type = this.registry.byKind(apiVersion ?? '', kind ?? '');
    if (!type) throw new Error(`the orchestrator API server serves no kind ${kind} at ${apiVersion}`);
    const slash = apiVersion.indexOf('/');
    return { type, version: slash < 0 ? apiVersion : apiVersion.slice(slash + 1) };
  }

  private async listen(): Promise<void> {
    const server = https.createServer({ key: this.identity.keyPem, cert: this.identity.certPem }, (req, res) => void this.handle(req, res));
    server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
    server.on('upgrade', (req, socket: Duplex, head: Buffer) => void this.upgrade(req, socket, head));
    server.on('tlsClientError', () => undefined);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, this.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  private async close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    this.hub.endAll();
    this.forwards.endAll();
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const socket of this.sockets) socket.destroy();
    await closed;
  }

  private async handle(req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse): Promise<void> {
    if (!this.server || this.stopped) {
      req.socket.destroy();
      return;
    }
    const url = new URL(req.url ?? '/', 'https://localhost');
    const info: RouteInfo = {};
    const contentType = req.headers['content-type']?.split(';')[0].trim() || undefined;
    const impersonate = impersonationOf(req);
    const entry = { method: req.method ?? '', path: url.pathname, query: Object.fromEntries(url.searchParams.entries()), at: Date.now(), contentType, ...(impersonate ? { impersonate } : {}) } as RequestLogEntry &
      RouteInfo & { status?: number; body?: unknown };
    this.log.push(entry);
    res.on('finish', () => (entry.status = res.statusCode));
    try {
      if (!PUBLIC_PATHS.has(url.pathname)) await this.authenticate(req);
      this.injectFailure(req.method ?? '', url);
      // Port-forward is a connection upgrade; a plain request to it is refused as the kubelet does.
      if (portForwardTarget(url.pathname)) {
        info.verb = 'create';
        info.resource = 'pods/portforward';
        throw badRequest('Upgrade request required');
      }
      await this.router.route(req, res, url, info);
    } catch (err) {
      const error = err instanceof ApiError ? err : internal((err as Error).message);
      sendStatus(res, error);
    } finally {
      entry.verb = info.verb;
      entry.resource = info.resource;
      if (!contentType?.includes('protobuf')) entry.body = loggedBody(requestBodies.get(req));
    }
  }

  /** A connection upgrade: pods/<name>/portforward (authenticated and logged like any request); anything else is refused. */
  private async upgrade(req: import('node:http').IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    socket.on('error', () => undefined);
    if (!this.server || this.stopped) {
      socket.destroy();
      return;
    }
    const url = new URL(req.url ?? '/', 'https://localhost');
    const impersonate = impersonationOf(req);
    const entry = { method: req.method ?? '', path: url.pathname, query: Object.fromEntries(url.searchParams.entries()), at: Date.now(), ...(impersonate ? { impersonate } : {}) } as RequestLogEntry &
      RouteInfo & { status?: number };
    this.log.push(entry);
    try {
      await this.authenticate(req);
      this.injectFailure(req.method ?? '', url);
      const target = portForwardTarget(url.pathname);
      if (!target) throw pathNotFound();
      // The real server authorizes a WebSocket port-forward as `create` on pods/portforward.
      entry.verb = 'create';
      entry.resource = 'pods/portforward';
      this.forwards.upgrade(req, socket, head, target, url.searchParams);
      entry.status = 101;
    } catch (err) {
      const error = err instanceof ApiError ? err : internal((err as Error).message);
      entry.status = error.code;
      refuseUpgrade(socket, error);
    }
  }

  private async authenticate(req: import('node:http').IncomingMessage): Promise<void> {
    const header = req.headers.authorization ?? '';
    const token = header.startsWith('Bearer ') ? header.slice(7).trim() : '';
    if (token === this.token) return;
    if (token.split('.').length === 3) {
      try {
        await jwtVerify(token, await importJWK(this.signer.jwk, 'ES256'));
        return;
      } catch {
        // answered below
      }
    }
    throw new ApiError(401, 'Unauthorized', 'Unauthorized');
  }

  private injectFailure(method: string, url: URL): void {
    const now = Date.now();
    const target = url.pathname + url.search;
    for (let i = 0; i < this.failures.length; i++) {
      const f = this.failures[i];
      if ((f.until !== undefined && now > f.until) || (f.remaining !== undefined && f.remaining <= 0)) {
        this.failures.splice(i--, 1);
        continue;
      }
      if (f.match && !f.match.test(target) && !f.match.test(`${method} ${target}`)) continue;
      if (f.remaining !== undefined) f.remaining--;
      const details = f.status === 429 || f.status === 503 ? { retryAfterSeconds: 1 } : undefined;
      const error = statusFor(f.status, `injected failure (HTTP ${f.status})`);
      throw details ? new ApiError(error.code, error.reason, error.message, details) : error;
    }
  }
}

/** The request's impersonation headers, each header line of a repeated one kept apart (as the real server reads them). */
function impersonationOf(req: import('node:http').IncomingMessage): Impersonation | undefined {
  const headers = req.headersDistinct;
  const user = headers['impersonate-user']?.[0];
  const groups = headers['impersonate-group'];
  const uid = headers['impersonate-uid']?.[0];
  if (user === undefined && groups === undefined && uid === undefined) return undefined;
  return { ...(user !== undefined ? { user } : {}), ...(groups !== undefined ? { groups: [...groups] } : {}), ...(uid !== undefined ? { uid } : {}) };
}

/** An upgrade refused with a Status answer, written on the raw connection, which then closes. */
function refuseUpgrade(socket: Duplex, error: ApiError): void {
  if (socket.destroyed) return;
  const body = JSON.stringify(error.status());
  socket.end(
    `HTTP/1.1 ${error.code} ${http.STATUS_CODES[error.code] ?? error.reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nCache-Control: no-cache, private\r\nConnection: close\r\n\r\n${body}`,
  );
}

/** A request body for the log: JSON parsed, other text as it is, nothing when empty. */
function loggedBody(raw: Buffer | undefined): unknown {
  const text = raw?.toString('utf8') ?? '';
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export async function startOrchApiServer(options?: StartOptions): Promise<OrchApiServer> {
  return OrchApiServer.start(options);
}

export type { Obj };

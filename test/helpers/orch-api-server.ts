import { randomUUID } from 'node:crypto';
import * as http from 'node:http';
import * as https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { isDeepStrictEqual } from 'node:util';
import type { KubeConfig, V1Namespace, V1Pod } from '@kubernetes/client-node';
import { orchConfigFor } from '../../src/modules/orch';
import { MeshCertificateAuthority } from '../../src/modules/security/ca';
import {
  FieldRequirement,
  LabelRequirement,
  parseFieldSelector,
  parseLabelSelector,
  POD_SELECTABLE_FIELDS,
  SelectorError,
} from '../../src/modules/cni/repair/selectors';

/*
 * An in-process stand-in for the orchestrator API server, speaking enough of the core/v1 REST
 * protocol for pods that @kubernetes/client-node (CoreV1Api, Watch, ListWatch/informers)
 * works against it unchanged: list and watch with field and label selectors and resource
 * versions, get, patch (merge, strategic merge, JSON patch), delete with preconditions, and
 * Status objects for errors. Tests seed and change pods directly (addPod, updatePod, ...)
 * and read `requests` to see what the client asked for.
 *
 * It serves HTTPS with a certificate for 127.0.0.1 from a test CA (the client library
 * refuses plain HTTP unless TLS verification is off); kubeConfig() gives a client config
 * trusting it.
 *
 * Not modelled: `limit`/`continue` (the whole list is returned, which the protocol allows),
 * server-side apply, dry runs, other resources than pods and namespaces.
 */

export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly query: Readonly<Record<string, string>>;
  /** The parsed JSON body, or the raw text when it is not JSON; undefined when empty. */
  readonly body: unknown;
  readonly contentType?: string;
}

export interface OrchApiServerOptions {
  /** When set, every request needs `Authorization: Bearer <token>`. */
  token?: string;
  /** Plain HTTP instead of HTTPS (clients then need skipTlsVerify). Default: HTTPS. */
  plainHttp?: boolean;
  /** Port on 127.0.0.1; default: any free one. A test brings a server "back" on its old port with this. */
  port?: number;
  /**
   * Deleting a pod bound to a node (with a non-zero grace period) only marks it, as the real
   * server does while the kubelet stops it: deletionTimestamp is set (MODIFIED). The test
   * then finishes it with deletePod(). Default: pods are removed at once.
   */
  gracefulDeletion?: boolean;
}

type EventType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** One change of the store. `object` is the state after (for DELETED: the last state, at the deletion's version). */
interface StoredEvent {
  readonly type: EventType;
  readonly rv: number;
  readonly object: V1Pod;
  readonly previous?: V1Pod;
}

interface Watcher {
  readonly res: http.ServerResponse;
  readonly namespace?: string;
  readonly fields: FieldRequirement[];
  readonly labels: LabelRequirement[];
  readonly bookmarks: boolean;
  timer?: NodeJS.Timeout;
}

interface Fault {
  readonly method?: string;
  readonly path: string | RegExp;
  readonly status: number;
  remaining: number;
}

/** An error answered as a Status object. */
class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }
}

const REASONS: Record<number, string> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  409: 'Conflict',
  410: 'Expired',
  415: 'UnsupportedMediaType',
  422: 'Invalid',
  429: 'TooManyRequests',
  500: 'InternalError',
  503: 'ServiceUnavailable',
};

const clone = <T>(value: T): T => structuredClone(value);
/** The object as it would travel over the wire (Dates become strings): the store holds only JSON. */
const jsonCopy = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

export class OrchApiServer {
  /** Every request received, in order (watch requests included). */
  readonly requests: RecordedRequest[] = [];
  private server?: http.Server | https.Server;
  private address = '';
  private caPem = '';
  /** Every TCP connection, TLS handshakes included (which the HTTP layer does not know of yet). */
  private readonly sockets = new Set<Socket>();
  private rv = 0;
  private compactedThrough = 0;
  private readonly store = new Map<string, V1Pod>();
  private readonly namespaceStore = new Map<string, V1Namespace>();
  private readonly history: StoredEvent[] = [];
  private readonly watchers = new Set<Watcher>();
  private readonly faults: Fault[] = [];

  constructor(private readonly options: OrchApiServerOptions = {}) {}

  async start(): Promise<void> {
    const handler = (req: http.IncomingMessage, res: http.ServerResponse) => void this.handle(req, res);
    let server: http.Server | https.Server;
    if (this.options.plainHttp) {
      server = http.createServer(handler);
    } else {
      const identity = await serverIdentity();
      this.caPem = identity.caPem;
      server = https.createServer({ key: identity.keyPem, cert: identity.certChainPem }, handler);
    }
    server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.options.port ?? 0, '127.0.0.1', () => resolve());
    });
    this.server = server;
    const scheme = this.options.plainHttp ? 'http' : 'https';
    this.address = `${scheme}://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  /** `https://127.0.0.1:<port>` (http with plainHttp). */
  get url(): string {
    if (!this.address) throw new Error('the orchestrator API server is not started');
    return this.address;
  }

  /** The CA that signed the server's certificate, base64 PEM as in an orchestrator config's certificate-authority-data. */
  get caData(): string | undefined {
    return this.caPem ? Buffer.from(this.caPem).toString('base64') : undefined;
  }

  /** A client config for this server: trusting its CA, with a bearer token if given. */
  kubeConfig(token?: string): KubeConfig {
    return orchConfigFor(this.url, { token, caData: this.caData, skipTlsVerify: this.options.plainHttp });
  }

  /** Closes every connection, even one mid-handshake, so clients see the server gone. */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    this.closeWatches();
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const socket of this.sockets) socket.destroy();
    await closed;
  }

  // ---- the test's side ----

  /** Stores a new pod (namespace `default` unless set; uid and creationTimestamp filled in) and announces it. */
  addPod(pod: V1Pod): V1Pod {
    const next = clone(pod);
    const meta = (next.metadata ??= {});
    if (!meta.name) throw new Error('addPod: metadata.name is required');
    meta.namespace ??= 'default';
    if (this.store.has(key(meta.namespace, meta.name))) throw new Error(`addPod: pod ${meta.namespace}/${meta.name} exists`);
    meta.uid ??= randomUUID();
    meta.creationTimestamp ??= new Date();
    this.ensureNamespace(meta.namespace);
    return clone(this.commit('ADDED', undefined, next));
  }

  /** Replaces a stored pod (uid and creationTimestamp kept) and announces the change. */
  updatePod(pod: V1Pod): V1Pod {
    const namespace = pod.metadata?.namespace ?? 'default';
    const name = pod.metadata?.name ?? '';
    const previous = this.store.get(key(namespace, name));
    if (!previous) throw new Error(`updatePod: no pod ${namespace}/${name}`);
    const next = clone(pod);
    next.metadata = { ...next.metadata, namespace, name, uid: previous.metadata?.uid, creationTimestamp: previous.metadata?.creationTimestamp };
    return clone(this.commit('MODIFIED', previous, next));
  }

  /** Changes a stored pod through a function of a copy of it. */
  modifyPod(namespace: string, name: string, change: (pod: V1Pod) => void): V1Pod {
    const current = this.pod(namespace, name);
    if (!current) throw new Error(`modifyPod: no pod ${namespace}/${name}`);
    change(current);
    return this.updatePod(current);
  }

  /** Removes a pod at once (as the kubelet finishing a graceful deletion) and announces it. */
  deletePod(namespace: string, name: string): V1Pod {
    const previous = this.store.get(key(namespace, name));
    if (!previous) throw new Error(`deletePod: no pod ${namespace}/${name}`);
    return clone(this.commit('DELETED', previous, undefined));
  }

  pod(namespace: string, name: string): V1Pod | undefined {
    const found = this.store.get(key(namespace, name));
    return found && clone(found);
  }

  pods(): V1Pod[] {
    return [...this.store.values()].map(clone);
  }

  addNamespace(name: string, labels: Record<string, string> = {}): void {
    this.ensureNamespace(name, labels);
  }

  /** The requests with this method whose path is (or matches) `path`. */
  requestsTo(method: string, path: string | RegExp): RecordedRequest[] {
    return this.requests.filter((r) => r.method === method && matchesPath(r.path, path));
  }

  /** The next `times` requests matching method and path are answered with `status` (a Status object). */
  failNext(method: string | undefined, path: string | RegExp, status = 500, times = 1): void {
    this.faults.push({ method, path, status, remaining: times });
  }

  /** Number of watch streams open now. */
  get watchCount(): number {
    return this.watchers.size;
  }

  /** Ends every open watch stream cleanly, as the server does when a watch times out. */
  closeWatches(): void {
    for (const w of [...this.watchers]) this.endWatch(w);
  }

  /** Forgets the change history: a watch from an older resourceVersion gets 410 Gone, so clients relist. */
  compact(): void {
    this.compactedThrough = this.rv;
    this.history.length = 0;
  }

  /** Sends a BOOKMARK at the current resourceVersion to the watches that allowed them. */
  sendBookmarks(): void {
    for (const w of this.watchers) if (w.bookmarks) this.bookmark(w);
  }

  /** The current resourceVersion, as lists report it. */
  get resourceVersion(): string {
    return String(this.rv);
  }

  // ---- the store ----

  private ensureNamespace(name: string, labels: Record<string, string> = {}): void {
    if (this.namespaceStore.has(name)) return;
    this.namespaceStore.set(name, {
      metadata: { name, uid: randomUUID(), resourceVersion: String(++this.rv), labels, creationTimestamp: new Date() },
      status: { phase: 'Active' },
    });
  }

  private commit(type: EventType, previous: V1Pod | undefined, next: V1Pod | undefined): V1Pod {
    const rv = ++this.rv;
    const object = jsonCopy((next ?? previous) as V1Pod);
    (object.metadata ??= {}).resourceVersion = String(rv);
    const k = key(object.metadata.namespace ?? '', object.metadata.name ?? '');
    if (type === 'DELETED') this.store.delete(k);
    else this.store.set(k, object);
    const event: StoredEvent = { type, rv, object, previous };
    this.history.push(event);
    for (const w of [...this.watchers]) this.deliver(w, event);
    return object;
  }

  // ---- HTTP ----

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    if (!this.server) {
      req.socket.destroy(); // stopping: a request that got in late
      return;
    }
    const url = new URL(req.url ?? '/', 'http://localhost');
    const text = await readBody(req);
    const contentType = req.headers['content-type']?.split(';')[0].trim();
    const query = Object.fromEntries(url.searchParams.entries());
    this.requests.push({ method: req.method ?? '', path: url.pathname, query, body: parseBody(text), contentType });
    try {
      this.authorize(req);
      this.injectFault(req.method ?? '', url.pathname);
      this.route(req.method ?? '', url.pathname, query, text, contentType, res);
    } catch (err) {
      if (err instanceof ApiError) sendStatus(res, err);
      else sendStatus(res, new ApiError(500, 'InternalError', `fake orchestrator API: ${(err as Error).message}`));
    }
  }

  private authorize(req: http.IncomingMessage): void {
    if (this.options.token === undefined) return;
    if (req.headers.authorization !== `Bearer ${this.options.token}`) throw new ApiError(401, 'Unauthorized', 'Unauthorized');
  }

  private injectFault(method: string, path: string): void {
    const fault = this.faults.find((f) => f.remaining > 0 && (!f.method || f.method === method) && matchesPath(path, f.path));
    if (!fault) return;
    fault.remaining--;
    throw new ApiError(fault.status, REASONS[fault.status] ?? 'Unknown', `injected failure (HTTP ${fault.status})`);
  }

  private route(method: string, path: string, query: Record<string, string>, body: string, contentType: string | undefined, res: http.ServerResponse): void {
    const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
    if (parts[0] !== 'api' || parts[1] !== 'v1') throw notFound();
    const rest = parts.slice(2);
    const only = (...methods: string[]) => {
      if (!methods.includes(method)) throw new ApiError(405, 'MethodNotAllowed', `the server does not allow this method on the requested resource`);
    };
    // /api/v1/pods
    if (rest.length === 1 && rest[0] === 'pods') {
      only('GET');
      return this.listOrWatch(undefined, query, res);
    }
    if (rest[0] !== 'namespaces') throw notFound();
    // /api/v1/namespaces
    if (rest.length === 1) {
      only('GET');
      const items = [...this.namespaceStore.values()].map(clone);
      return sendJson(res, 200, { kind: 'NamespaceList', apiVersion: 'v1', metadata: { resourceVersion: String(this.rv) }, items });
    }
    const namespace = rest[1];
    // /api/v1/namespaces/{ns}
    if (rest.length === 2) {
      only('GET');
      const ns = this.namespaceStore.get(namespace);
      if (!ns) throw notFound('namespaces', namespace);
      return sendJson(res, 200, { kind: 'Namespace', apiVersion: 'v1', ...clone(ns) });
    }
    if (rest[2] !== 'pods') throw notFound();
    // /api/v1/namespaces/{ns}/pods
    if (rest.length === 3) {
      only('GET');
      return this.listOrWatch(namespace, query, res);
    }
    const name = rest[3];
    // /api/v1/namespaces/{ns}/pods/{name}[/status]
    if (rest.length === 4 || (rest.length === 5 && rest[4] === 'status')) {
      const status = rest.length === 5;
      if (status) only('GET', 'PATCH');
      else only('GET', 'PATCH', 'DELETE');
      const current = this.store.get(key(namespace, name));
      if (!current) throw notFound('pods', name);
      if (method === 'GET') return sendJson(res, 200, withKind(current));
      if (method === 'PATCH') return sendJson(res, 200, withKind(this.patch(current, body, contentType, status)));
      return sendJson(res, 200, withKind(this.delete(current, query, body)));
    }
    throw notFound();
  }

  private listOrWatch(namespace: string | undefined, query: Record<string, string>, res: http.ServerResponse): void {
    const fields = parseFields(query.fieldSelector ?? '');
    const labels = parseLabels(query.labelSelector ?? '');
    if (query.watch === 'true' || query.watch === '1') return this.watch(namespace, fields, labels, query, res);
    const items = [...this.store.values()]
      .filter((p) => (!namespace || p.metadata?.namespace === namespace) && matches(p, fields, labels))
      .sort((a, b) => key(a.metadata?.namespace ?? '', a.metadata?.name ?? '').localeCompare(key(b.metadata?.namespace ?? '', b.metadata?.name ?? '')))
      .map(clone);
    sendJson(res, 200, { kind: 'PodList', apiVersion: 'v1', metadata: { resourceVersion: String(this.rv) }, items });
  }

  private watch(namespace: string | undefined, fields: FieldRequirement[], labels: LabelRequirement[], query: Record<string, string>, res: http.ServerResponse): void {
    const from = query.resourceVersion ?? '';
    if (from !== '' && !/^\d+$/.test(from)) throw new ApiError(400, 'BadRequest', `invalid resourceVersion ${JSON.stringify(from)}: not a number`);
    const bookmarks = query.allowWatchBookmarks === 'true' || query.allowWatchBookmarks === '1';
    const watcher: Watcher = { res, namespace, fields, labels, bookmarks };
    res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
    res.flushHeaders();
    if (from !== '' && from !== '0' && Number(from) < this.compactedThrough) {
      // The real server's answer to a version it no longer has: an ERROR event, then the end.
      write(res, { type: 'ERROR', object: statusBody(new ApiError(410, 'Expired', `too old resource version: ${from} (${this.compactedThrough})`)) });
      res.end();
      return;
    }
    this.watchers.add(watcher);
    res.on('close', () => this.dropWatch(watcher));
    if (from === '' || from === '0') {
      // No version: the current state as ADDED events first.
      for (const pod of this.store.values()) {
        if (this.visible(watcher, pod)) write(res, { type: 'ADDED', object: withKind(pod) });
      }
      if (bookmarks && query.sendInitialEvents === 'true') this.bookmark(watcher, true);
    } else {
      for (const event of this.history) if (event.rv > Number(from)) this.deliver(watcher, event);
    }
    const timeout = Number(query.timeoutSeconds);
    if (timeout > 0) watcher.timer = setTimeout(() => this.endWatch(watcher), timeout * 1000);
  }

  private visible(w: Watcher, pod: V1Pod): boolean {
    return (!w.namespace || pod.metadata?.namespace === w.namespace) && matches(pod, w.fields, w.labels);
  }

  /** The event as this watch sees it: a pod entering its selection is ADDED, one leaving it DELETED. */
  private deliver(w: Watcher, event: StoredEvent): void {
    const now = event.type !== 'DELETED' && this.visible(w, event.object);
    const before = event.type === 'ADDED' ? false : this.visible(w, event.type === 'DELETED' ? event.object : (event.previous as V1Pod));
    if (now && before) write(w.res, { type: 'MODIFIED', object: withKind(event.object) });
    else if (now) write(w.res, { type: 'ADDED', object: withKind(event.object) });
    else if (before) {
      // Leaving the selection: the last state the watch matched, at this event's version.
      const last = clone(event.type === 'DELETED' ? event.object : (event.previous as V1Pod));
      (last.metadata ??= {}).resourceVersion = String(event.rv);
      write(w.res, { type: 'DELETED', object: withKind(last) });
    }
  }

  private bookmark(w: Watcher, initialEventsEnd = false): void {
    const metadata: Record<string, unknown> = { resourceVersion: String(this.rv) };
    if (initialEventsEnd) metadata.annotations = { 'k8s.io/initial-events-end': 'true' };
    write(w.res, { type: 'BOOKMARK', object: { kind: 'Pod', apiVersion: 'v1', metadata } });
  }

  private endWatch(w: Watcher): void {
    if (w.bookmarks && this.watchers.has(w)) this.bookmark(w);
    this.dropWatch(w);
    w.res.end();
  }

  private dropWatch(w: Watcher): void {
    clearTimeout(w.timer);
    this.watchers.delete(w);
  }

  private patch(current: V1Pod, text: string, contentType: string | undefined, statusOnly: boolean): V1Pod {
    let patch: unknown;
    try {
      patch = JSON.parse(text);
    } catch {
      throw new ApiError(400, 'BadRequest', `the patch body is not JSON: ${JSON.stringify(text.slice(0, 80))}`);
    }
    let next: unknown;
    switch (contentType) {
      case 'application/merge-patch+json':
      case 'application/strategic-merge-patch+json': // lists are not merged by key here: they are replaced, as in a merge patch
        if (!isObject(patch)) throw new ApiError(400, 'BadRequest', 'a merge patch must be a JSON object');
        next = mergePatch(clone(current), patch);
        break;
      case 'application/json-patch+json':
        if (!Array.isArray(patch)) throw new ApiError(400, 'BadRequest', 'a JSON patch must be an array of operations');
        next = jsonPatch(clone(current), patch);
        break;
      default:
        throw new ApiError(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json`);
    }
    if (!isObject(next)) throw new ApiError(422, 'Invalid', 'the patched object is not an object');
    const pod = next as V1Pod;
    const was = current.metadata ?? {};
    const meta = (pod.metadata ??= {});
    if (meta.name !== was.name) throw new ApiError(400, 'BadRequest', `the name of the object (${meta.name}) does not match the name on the URL (${was.name})`);
    if (meta.namespace !== was.namespace) throw new ApiError(400, 'BadRequest', 'the namespace of the object does not match the namespace on the URL');
    if (meta.uid !== was.uid) throw new ApiError(422, 'Invalid', `Pod "${was.name}" is invalid: metadata.uid: Invalid value: field is immutable`);
    if (meta.resourceVersion !== was.resourceVersion) throw conflict(was.name ?? '');
    if (statusOnly) {
      // pods/status may change status and metadata, never the spec or the owners (the real server's rule).
      pod.spec = clone(current.spec);
      meta.ownerReferences = clone(was.ownerReferences);
      if (meta.ownerReferences === undefined) delete meta.ownerReferences;
    }
    // An unchanged object is not a new version.
    if (isDeepStrictEqual(jsonCopy(pod), current)) return clone(current);
    return this.commit('MODIFIED', current, pod);
  }

  private delete(current: V1Pod, query: Record<string, string>, text: string): V1Pod {
    const options = (parseBody(text) ?? {}) as { preconditions?: { uid?: string; resourceVersion?: string }; gracePeriodSeconds?: number };
    const meta = current.metadata ?? {};
    const pre = options.preconditions ?? {};
    if (pre.uid !== undefined && pre.uid !== meta.uid) {
      throw new ApiError(409, 'Conflict', `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${meta.uid}`, { name: meta.name, kind: 'pods' });
    }
    if (pre.resourceVersion !== undefined && pre.resourceVersion !== meta.resourceVersion) {
      throw new ApiError(
        409,
        'Conflict',
        `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${meta.resourceVersion}`,
        { name: meta.name, kind: 'pods' },
      );
    }
    const grace = query.gracePeriodSeconds !== undefined ? Number(query.gracePeriodSeconds) : options.gracePeriodSeconds;
    if (this.options.gracefulDeletion && current.spec?.nodeName && grace !== 0) {
      if (meta.deletionTimestamp) return clone(current);
      const seconds = grace ?? current.spec.terminationGracePeriodSeconds ?? 30;
      const next = clone(current);
      next.metadata = { ...next.metadata, deletionTimestamp: new Date(Date.now() + seconds * 1000), deletionGracePeriodSeconds: seconds };
      return this.commit('MODIFIED', current, next);
    }
    return this.commit('DELETED', current, undefined);
  }
}

// ---- selection ----

function parseFields(text: string): FieldRequirement[] {
  try {
    const requirements = parseFieldSelector(text);
    for (const r of requirements) {
      if (!POD_SELECTABLE_FIELDS.includes(r.field)) throw new SelectorError(`field label not supported: ${r.field}`);
    }
    return requirements;
  } catch (err) {
    if (err instanceof SelectorError) throw new ApiError(400, 'BadRequest', `unable to parse requirement: ${err.message}`);
    throw err;
  }
}

function parseLabels(text: string): LabelRequirement[] {
  try {
    return parseLabelSelector(text);
  } catch (err) {
    if (err instanceof SelectorError) throw new ApiError(400, 'BadRequest', `unable to parse requirement: ${err.message}`);
    throw err;
  }
}

function matches(pod: V1Pod, fields: FieldRequirement[], labels: LabelRequirement[]): boolean {
  return fields.every((r) => fieldMatches(pod, r)) && labels.every((r) => labelMatches(pod.metadata?.labels ?? {}, r));
}

function fieldValue(pod: V1Pod, field: string): string {
  switch (field) {
    case 'metadata.name':
      return pod.metadata?.name ?? '';
    case 'metadata.namespace':
      return pod.metadata?.namespace ?? '';
    case 'spec.nodeName':
      return pod.spec?.nodeName ?? '';
    case 'spec.restartPolicy':
      return pod.spec?.restartPolicy ?? '';
    case 'spec.schedulerName':
      return pod.spec?.schedulerName ?? '';
    case 'spec.serviceAccountName':
      return pod.spec?.serviceAccountName ?? '';
    case 'spec.hostNetwork':
      return String(pod.spec?.hostNetwork ?? false);
    case 'status.phase':
      return pod.status?.phase ?? '';
    case 'status.podIP':
      return pod.status?.podIP ?? '';
    case 'status.podIPs':
      return pod.status?.podIPs?.[0]?.ip ?? '';
    case 'status.nominatedNodeName':
      return pod.status?.nominatedNodeName ?? '';
    default:
      throw new Error(`unknown pod field ${field}`);
  }
}

function fieldMatches(pod: V1Pod, r: FieldRequirement): boolean {
  const equal = fieldValue(pod, r.field) === r.value;
  return r.operator === '!=' ? !equal : equal;
}

function labelMatches(labels: Record<string, string>, r: LabelRequirement): boolean {
  const has = Object.prototype.hasOwnProperty.call(labels, r.key);
  const value = labels[r.key];
  switch (r.operator) {
    case '=':
    case 'in':
      return has && r.values.includes(value);
    case '!=':
    case 'notin':
      return !has || !r.values.includes(value);
    case 'exists':
      return has;
    case '!':
      return !has;
    case '>':
    case '<': {
      if (!has || !/^-?\d+$/.test(value)) return false;
      return r.operator === '>' ? Number(value) > Number(r.values[0]) : Number(value) < Number(r.values[0]);
    }
  }
}

// ---- patches ----

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** RFC 7386: objects merge, null removes, anything else replaces. */
function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return clone(patch);
  const out: Record<string, unknown> = isObject(target) ? target : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

interface JsonPatchOperation {
  op?: string;
  path?: string;
  from?: string;
  value?: unknown;
}

/** RFC 6902: add, remove, replace, move, copy, test. */
function jsonPatch(document: unknown, operations: unknown[]): unknown {
  let doc = document;
  for (const raw of operations) {
    if (!isObject(raw)) throw new ApiError(400, 'BadRequest', 'a JSON patch operation must be an object');
    const op = raw as JsonPatchOperation;
    if (typeof op.path !== 'string') throw new ApiError(400, 'BadRequest', `JSON patch operation ${JSON.stringify(op.op)} has no path`);
    switch (op.op) {
      case 'add':
        doc = addAt(doc, pointer(op.path), clone(op.value));
        break;
      case 'remove':
        doc = removeAt(doc, pointer(op.path));
        break;
      case 'replace':
        getAt(doc, pointer(op.path));
        doc = addAt(removeAt(doc, pointer(op.path)), pointer(op.path), clone(op.value));
        break;
      case 'move': {
        const value = getAt(doc, pointer(op.from ?? ''));
        doc = addAt(removeAt(doc, pointer(op.from ?? '')), pointer(op.path), value);
        break;
      }
      case 'copy':
        doc = addAt(doc, pointer(op.path), clone(getAt(doc, pointer(op.from ?? ''))));
        break;
      case 'test':
        if (!isDeepStrictEqual(getAt(doc, pointer(op.path)), op.value)) {
          throw new ApiError(409, 'Conflict', `JSON patch test failed at ${op.path}`);
        }
        break;
      default:
        throw new ApiError(400, 'BadRequest', `unknown JSON patch operation ${JSON.stringify(op.op)}`);
    }
  }
  return doc;
}

function pointer(path: string): string[] {
  if (path === '') return [];
  if (!path.startsWith('/')) throw new ApiError(400, 'BadRequest', `JSON pointer ${JSON.stringify(path)} does not start with "/"`);
  return path
    .slice(1)
    .split('/')
    .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function missing(tokens: string[]): ApiError {
  return new ApiError(422, 'Invalid', `JSON patch path /${tokens.join('/')} does not exist`);
}

function parentOf(doc: unknown, tokens: string[]): unknown {
  return tokens.slice(0, -1).reduce<unknown>((node, t, i) => child(node, t, tokens.slice(0, i + 1)), doc);
}

function child(node: unknown, token: string, at: string[]): unknown {
  if (Array.isArray(node)) {
    const i = Number(token);
    if (!/^\d+$/.test(token) || i >= node.length) throw missing(at);
    return node[i];
  }
  if (isObject(node) && Object.prototype.hasOwnProperty.call(node, token)) return node[token];
  throw missing(at);
}

function getAt(doc: unknown, tokens: string[]): unknown {
  return tokens.reduce<unknown>((node, t, i) => child(node, t, tokens.slice(0, i + 1)), doc);
}

function addAt(doc: unknown, tokens: string[], value: unknown): unknown {
  if (tokens.length === 0) return value;
  const parent = parentOf(doc, tokens);
  const last = tokens[tokens.length - 1];
  if (Array.isArray(parent)) {
    const i = last === '-' ? parent.length : Number(last);
    if (!/^\d+$/.test(last) && last !== '-') throw missing(tokens);
    if (i > parent.length) throw missing(tokens);
    parent.splice(i, 0, value);
  } else if (isObject(parent)) {
    parent[last] = value;
  } else {
    throw missing(tokens);
  }
  return doc;
}

function removeAt(doc: unknown, tokens: string[]): unknown {
  if (tokens.length === 0) return undefined;
  getAt(doc, tokens);
  const parent = parentOf(doc, tokens);
  const last = tokens[tokens.length - 1];
  if (Array.isArray(parent)) parent.splice(Number(last), 1);
  else delete (parent as Record<string, unknown>)[last];
  return doc;
}

// ---- wire format ----

function key(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}

function matchesPath(path: string, pattern: string | RegExp): boolean {
  return typeof pattern === 'string' ? path === pattern : pattern.test(path);
}

function withKind(pod: V1Pod): V1Pod {
  return { apiVersion: 'v1', kind: 'Pod', ...clone(pod) };
}

function notFound(kind?: string, name?: string): ApiError {
  if (!kind) return new ApiError(404, 'NotFound', 'the server could not find the requested resource', {});
  return new ApiError(404, 'NotFound', `${kind} "${name}" not found`, { name, kind });
}

function conflict(name: string): ApiError {
  return new ApiError(409, 'Conflict', `Operation cannot be fulfilled on pods "${name}": the object has been modified; please apply your changes to the latest version and try again`, {
    name,
    kind: 'pods',
  });
}

function statusBody(err: ApiError): Record<string, unknown> {
  const body: Record<string, unknown> = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: err.message, reason: err.reason };
  if (err.details) body.details = err.details;
  body.code = err.code;
  return body;
}

function sendStatus(res: http.ServerResponse, err: ApiError): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  sendJson(res, err.code, statusBody(err));
}

function sendJson(res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

function write(res: http.ServerResponse, event: unknown): void {
  if (!res.writableEnded) res.write(JSON.stringify(event) + '\n');
}

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (text += chunk));
    req.on('end', () => resolve(text));
    req.on('error', reject);
  });
}

function parseBody(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

interface ServerIdentity {
  keyPem: string;
  certChainPem: string;
  caPem: string;
}

let identity: Promise<ServerIdentity> | undefined;

/** One certificate for 127.0.0.1 per test process: making the CA's RSA root is the slow part. */
function serverIdentity(): Promise<ServerIdentity> {
  identity ??= (async () => {
    const ca = await MeshCertificateAuthority.create({
      trustDomain: 'cluster.local',
      selfSigned: { rsaKeySize: 2048, ttlMs: 24 * 3600_000 },
      workloadCertTtl: { defaultMs: 3600_000, maxMs: 24 * 3600_000 },
      rotation: { checkIntervalMs: 0, gracePeriodPercentile: 20, jitter: false },
    });
    try {
      const cert = await ca.issueServerCertificate(['localhost', '127.0.0.1'], 12 * 3600_000);
      return { ...cert, caPem: ca.rootCertificates().join('') };
    } finally {
      ca.stop();
    }
  })();
  return identity;
}

/** Polls until `condition` holds; fails with `what` after `timeoutMs`. */
export async function waitUntil(what: string, condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

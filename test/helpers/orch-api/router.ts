import type * as http from 'node:http';
import { ApiError, badRequest, conflict, methodNotAllowed, pathNotFound } from './errors';
import { jsonPatch, mergePatch } from './json-patch';
import { aggregated, AGGREGATED_CONTENT_TYPE, apiGroup, apiGroupList, apiResourceList, apiVersions, wantsAggregated } from './discovery';
import { listObjects } from './list';
import type { DeleteOptions, Operations, PatchType, WriteOptions } from './operations';
import { openApiV2, openApiV3Document, openApiV3Index } from './openapi';
import { groupVersion, type ResourceRegistry, type ResourceType } from './resources';
import { decodeProtobuf, PROTOBUF } from './protobuf';
import { logQuery, type PodLogs } from './pod-logs';
import { parseSelection } from './selectors';
import type { Obj, Store } from './store';
import { jsonOf } from './store';
import { table, wantsTable } from './table';
import { requestToken } from './tokens';
import { type AccessRules, reviewAccess } from './access-review';
import type { TokenSigner } from './tls';
import type { WatchHub } from './watch';

/*
 * The REST surface: routes /api and /apis paths to discovery, to the resource verbs (get,
 * list, watch, create, update, patch, delete, deletecollection) and to the subresources
 * (status, scale, token), and writes JSON (or Table) answers and Status errors.
 */

export interface RouteInfo {
  verb?: string;
  resource?: string;
}

/** The body of each request, once the router has read it (for the request log). */
export const requestBodies = new WeakMap<http.IncomingMessage, Buffer>();

const PATCH_TYPES: Record<string, PatchType> = {
  'application/merge-patch+json': 'merge',
  'application/json-patch+json': 'json',
  'application/strategic-merge-patch+json': 'strategic',
  'application/apply-patch+yaml': 'apply',
  'application/apply-patch+cbor': 'apply',
};

const MAX_BODY = 8 * 1024 * 1024;

export interface RouterDeps {
  readonly store: Store;
  readonly registry: ResourceRegistry;
  readonly ops: Operations;
  readonly hub: WatchHub;
  readonly signer: TokenSigner;
  readonly serverAddress: () => string;
  readonly access: AccessRules;
  /** `v<major>.<minor>.<patch>` for /version; default v1.32.0. */
  readonly serverVersion?: string;
  /** What `pods/<name>/log` answers. */
  readonly podLogs: PodLogs;
}

interface Target {
  type: ResourceType;
  version: string;
  namespace?: string;
  name?: string;
  subresource?: string;
  watchPath: boolean;
}

export class Router {
  constructor(private readonly deps: RouterDeps) {}

  async route(req: http.IncomingMessage, res: http.ServerResponse, url: URL, info: RouteInfo): Promise<void> {
    const path = url.pathname.replace(/\/+$/, '') || '/';
    const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
    const { registry } = this.deps;
    switch (path) {
      case '/healthz':
      case '/livez':
      case '/readyz':
        return sendText(res, 200, 'ok');
      case '/version':
        return sendJson(res, 200, versionInfo(this.deps.serverVersion ?? 'v1.32.0'));
      case '/openapi/v2':
        return sendJson(res, 200, openApiV2(registry));
      case '/openapi/v3':
        return sendJson(res, 200, openApiV3Index(registry));
      case '/.well-known/openid-configuration':
        return sendJson(res, 200, { issuer: 'https://kubernetes.default.svc.cluster.local', jwks_uri: `https://${this.deps.serverAddress()}/openid/v1/jwks`, response_types_supported: ['id_token'], subject_types_supported: ['public'], id_token_signing_alg_values_supported: ['ES256'] });
      case '/openid/v1/jwks':
        return sendJson(res, 200, { keys: [this.deps.signer.jwk] });
    }
    if (parts[0] === 'openapi' && parts[1] === 'v3' && parts.length >= 3) {
      const doc = openApiV3Document(registry, parts.slice(2).join('/'));
      if (!doc) throw pathNotFound();
      return sendJson(res, 200, doc);
    }
    const accept = req.headers.accept;
    if (parts[0] === 'api') {
      if (parts.length === 1) {
        if (wantsAggregated(accept)) return sendJson(res, 200, aggregated(registry, true), AGGREGATED_CONTENT_TYPE);
        return sendJson(res, 200, apiVersions(this.deps.serverAddress()));
      }
      if (parts.length === 2) return sendJson(res, 200, found(apiResourceList(registry, '', parts[1])));
      return this.resource(req, res, url, { group: '', version: parts[1], rest: parts.slice(2) }, info);
    }
    if (parts[0] === 'apis') {
      if (parts.length === 1) {
        if (wantsAggregated(accept)) return sendJson(res, 200, aggregated(registry, false), AGGREGATED_CONTENT_TYPE);
        return sendJson(res, 200, apiGroupList(registry));
      }
      if (parts.length === 2) return sendJson(res, 200, found(apiGroup(registry, parts[1])));
      if (parts.length === 3) return sendJson(res, 200, found(apiResourceList(registry, parts[1], parts[2])));
      return this.resource(req, res, url, { group: parts[1], version: parts[2], rest: parts.slice(3) }, info);
    }
    throw pathNotFound();
  }

  private target(group: string, version: string, rest: string[]): Target {
    let watchPath = false;
    if (rest[0] === 'watch') {
      watchPath = true;
      rest = rest.slice(1);
    }
    let namespace: string | undefined;
    let plural: string;
    let name: string | undefined;
    let subresource: string | undefined;
    const namespacesType = group === '' && rest[0] === 'namespaces';
    if (namespacesType && (rest.length <= 2 || (rest.length === 3 && (rest[2] === 'status' || rest[2] === 'finalize')))) {
      [plural, name, subresource] = rest;
    } else if (rest[0] === 'namespaces' && rest.length >= 3) {
      namespace = rest[1];
      [plural, name, subresource] = rest.slice(2);
      if (rest.length > 5) throw pathNotFound();
    } else {
      [plural, name, subresource] = rest;
      if (rest.length > 3) throw pathNotFound();
    }
    const type = this.deps.registry.lookup(group, version, plural);
    if (!type) throw pathNotFound();
    if (type.namespaced === false && namespace !== undefined) throw pathNotFound();
    if (subresource && !type.subresources.includes(subresource)) throw pathNotFound();
    return { type, version, namespace, name, subresource, watchPath };
  }

  private async resource(req: http.IncomingMessage, res: http.ServerResponse, url: URL, where: { group: string; version: string; rest: string[] }, info: RouteInfo): Promise<void> {
    const t = this.target(where.group, where.version, where.rest);
    const q = url.searchParams;
    const method = req.method ?? 'GET';
    const { ops } = this.deps;
    const { type, version, namespace, name, subresource } = t;
    info.resource = subresource ? `${type.plural}/${subresource}` : type.plural;
    const apiVersion = groupVersion(type.group, version);
    const warnings: string[] = [];
    const writeOptions = (): WriteOptions => ({
      admission: true,
      dryRun: q.getAll('dryRun').includes('All'),
      fieldManager: q.get('fieldManager') ?? userAgentManager(req.headers['user-agent']),
      fieldValidation: q.get('fieldValidation') ?? undefined,
      warnings,
    });
    const answer = (status: number, obj: Obj) => sendObject(res, status, ops.asVersion(type, obj, version), warnings);
    if (type.group === 'authorization.k8s.io' && type.plural === 'selfsubjectaccessreviews') {
      if (method !== 'POST' || name !== undefined || t.watchPath) throw methodNotAllowed();
      info.verb = 'create';
      return sendJson(res, 201, reviewAccess(this.deps.access, await readJson(req)));
    }

    if (name === undefined) {
      const watch = t.watchPath || q.get('watch') === 'true' || q.get('watch') === '1';
      if (method === 'GET' && watch) {
        info.verb = 'watch';
        return this.watch(req, res, t, q);
      }
      if (t.watchPath) throw methodNotAllowed();
      if (method === 'GET') {
        info.verb = 'list';
        return this.list(req, res, t, q);
      }
      if (method === 'POST') {
        info.verb = 'create';
        const body = await readJson(req);
        const created = await ops.create(type, version, namespace, body, writeOptions());
        return answer(201, created);
      }
      if (method === 'DELETE') {
        info.verb = 'deletecollection';
        const selection = parseSelection(type, q.get('labelSelector') ?? '', q.get('fieldSelector') ?? '');
        const options = { ...deleteOptions(await readJson(req, true), q) };
        const deleted: Obj[] = [];
        for (const obj of listObjects(this.deps.store, { type, namespace, selection }).items) {
          deleted.push(ops.asVersion(type, await ops.remove(type, version, obj.metadata.namespace, obj.metadata.name, options, writeOptions()), version));
        }
        return sendJson(res, 200, { kind: type.listKind, apiVersion, metadata: { resourceVersion: String(this.deps.store.resourceVersion) }, items: deleted });
      }
      throw methodNotAllowed();
    }
    if (t.watchPath) {
      info.verb = 'watch';
      const fieldSelector = [q.get('fieldSelector'), `metadata.name=${name}`].filter(Boolean).join(',');
      q.set('fieldSelector', fieldSelector);
      return this.watch(req, res, { ...t, name: undefined }, q);
    }
    if (subresource === 'token') {
      if (method !== 'POST') throw methodNotAllowed();
      info.verb = 'create';
      const sa = ops.get(type, namespace, name);
      return sendJson(res, 201, await requestToken(this.deps.store, this.deps.signer, sa, await readJson(req)));
    }
    if (subresource === 'log') {
      if (method !== 'GET') throw methodNotAllowed();
      info.verb = 'get';
      return sendRaw(res, 200, this.deps.podLogs.read(ops.get(type, namespace, name), logQuery(q)), 'text/plain');
    }
    if (subresource === 'scale') return this.scale(req, res, t, info, writeOptions);
    switch (method) {
      case 'GET':
        info.verb = 'get';
        if (wantsTable(req.headers.accept)) return sendJson(res, 200, table(type, version, apiVersion, [ops.get(type, namespace, name)], {}, q.get('includeObject') ?? 'Metadata'));
        return answer(200, ops.get(type, namespace, name));
      case 'PUT': {
        info.verb = 'update';
        const body = await readJson(req);
        if (subresource === 'finalize') return answer(200, await ops.update(type, version, namespace, name, body, writeOptions()));
        return answer(200, await ops.update(type, version, namespace, name, body, writeOptions(), subresource));
      }
      case 'PATCH': {
        info.verb = 'patch';
        const contentType = (req.headers['content-type'] ?? '').split(';')[0].trim();
        const patchType = PATCH_TYPES[contentType];
        if (!patchType) {
          throw new ApiError(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml${type.crd ? '' : ', application/strategic-merge-patch+json'}`);
        }
        const text = await readText(req);
        const force = q.get('force') === 'true';
        if (patchType !== 'apply' && q.has('force')) throw badRequest('force is only allowed for apply patches');
        const existed = this.deps.store.get(`${type.group}/${type.plural}`, namespace ?? '', name) !== undefined;
        const patched = await ops.patch(type, version, namespace, name, patchType, text, { ...writeOptions(), force }, subresource);
        // An apply that created the object answers 201 Created, as the real server does.
        return answer(existed ? 200 : 201, patched);
      }
      case 'DELETE': {
        info.verb = 'delete';
        if (subresource) throw methodNotAllowed();
        const options = deleteOptions(await readJson(req, true), q);
        const deleted = await ops.remove(type, version, namespace, name, options, writeOptions());
        return answer(200, deleted);
      }
      default:
        throw methodNotAllowed();
    }
  }

  private list(req: http.IncomingMessage, res: http.ServerResponse, t: Target, q: URLSearchParams): void {
    const { type, version, namespace } = t;
    const selection = parseSelection(type, q.get('labelSelector') ?? '', q.get('fieldSelector') ?? '');
    const limit = q.has('limit') ? Number(q.get('limit')) : undefined;
    if (limit !== undefined && !(Number.isInteger(limit) && limit >= 0)) throw badRequest(`invalid limit ${JSON.stringify(q.get('limit'))}`);
    const result = listObjects(this.deps.store, {
      type,
      namespace,
      selection,
      limit,
      continueToken: q.get('continue') ?? undefined,
      resourceVersion: q.get('resourceVersion') ?? undefined,
      resourceVersionMatch: q.get('resourceVersionMatch') ?? undefined,
    });
    const apiVersion = groupVersion(type.group, version);
    const listMeta: Obj = { resourceVersion: String(result.resourceVersion) };
    if (result.continueToken) listMeta.continue = result.continueToken;
    if (result.remainingItemCount !== undefined) listMeta.remainingItemCount = result.remainingItemCount;
    if (wantsTable(req.headers.accept)) return sendJson(res, 200, table(type, version, apiVersion, result.items, listMeta, q.get('includeObject') ?? 'Metadata'));
    // Items are serialized once per stored object; the list is their concatenation.
    const items = result.items.map((o) => (o.apiVersion === apiVersion ? jsonOf(o) : JSON.stringify({ ...o, apiVersion })));
    const text = `{"kind":${JSON.stringify(type.listKind)},"apiVersion":${JSON.stringify(apiVersion)},"metadata":${JSON.stringify(listMeta)},"items":[${items.join(',')}]}`;
    sendRaw(res, 200, text, 'application/json');
  }

  private watch(req: http.IncomingMessage, res: http.ServerResponse, t: Target, q: URLSearchParams): void {
    const { type, version, namespace } = t;
    const selection = parseSelection(type, q.get('labelSelector') ?? '', q.get('fieldSelector') ?? '');
    const timeout = q.has('timeoutSeconds') ? Number(q.get('timeoutSeconds')) : undefined;
    const asTable = wantsTable(req.headers.accept);
    let first = true;
    this.deps.hub.open(
      {
        type,
        version,
        namespace,
        selection,
        bookmarks: q.get('allowWatchBookmarks') === 'true' || q.get('allowWatchBookmarks') === '1',
        resourceVersion: q.get('resourceVersion') ?? undefined,
        sendInitialEvents: q.get('sendInitialEvents') === 'true',
        timeoutSeconds: timeout !== undefined && Number.isFinite(timeout) ? timeout : undefined,
        encode: asTable
          ? (obj, apiVersion) => {
              const text = JSON.stringify(table(type, version, apiVersion, [obj], { resourceVersion: obj.metadata.resourceVersion }, q.get('includeObject') ?? 'Metadata', first));
              first = false;
              return text;
            }
          : undefined,
      },
      res,
    );
  }

  /** The autoscaling/v1 Scale of a workload: its spec.replicas and status. */
  private async scale(req: http.IncomingMessage, res: http.ServerResponse, t: Target, info: RouteInfo, writeOptions: () => WriteOptions): Promise<void> {
    const { ops } = this.deps;
    const { type, version, namespace, name } = t;
    const toScale = (o: Obj): Obj => ({
      kind: 'Scale',
      apiVersion: 'autoscaling/v1',
      metadata: { name: o.metadata.name, namespace: o.metadata.namespace, uid: o.metadata.uid, resourceVersion: o.metadata.resourceVersion, creationTimestamp: o.metadata.creationTimestamp },
      spec: { replicas: o.spec?.replicas ?? 0 },
      status: { replicas: o.status?.replicas ?? 0, selector: selectorString(o.spec?.selector) },
    });
    const current = ops.get(type, namespace, name as string);
    if (req.method === 'GET') {
      info.verb = 'get';
      return sendJson(res, 200, toScale(current));
    }
    let replicas: unknown;
    if (req.method === 'PUT') {
      info.verb = 'update';
      const body = (await readJson(req)) as Obj;
      if (body?.metadata?.resourceVersion && body.metadata.resourceVersion !== current.metadata.resourceVersion) throw conflict(type.group, type.plural, name as string);
      replicas = body?.spec?.replicas;
    } else if (req.method === 'PATCH') {
      info.verb = 'patch';
      const contentType = (req.headers['content-type'] ?? '').split(';')[0].trim();
      const patchType = PATCH_TYPES[contentType];
      if (!patchType || patchType === 'apply') throw new ApiError(415, 'UnsupportedMediaType', 'the body of the request was in an unknown format');
      const patch = JSON.parse(await readText(req));
      const scaled = (patchType === 'json' ? jsonPatch(toScale(current), patch) : mergePatch(toScale(current), patch)) as Obj;
      replicas = scaled?.spec?.replicas;
    } else throw methodNotAllowed();
    if (!(Number.isInteger(replicas) && (replicas as number) >= 0)) throw badRequest(`spec.replicas: Invalid value: ${JSON.stringify(replicas)}: must be greater than or equal to 0`);
    const next = { ...ops.asVersion(type, current, version), spec: { ...current.spec, replicas } };
    const updated = await ops.update(type, version, namespace, name as string, next, writeOptions());
    return sendJson(res, 200, toScale(updated));
  }
}

function selectorString(selector: Obj | undefined): string {
  if (!selector) return '';
  const parts = Object.entries(selector.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`);
  for (const e of selector.matchExpressions ?? []) {
    if (e.operator === 'In') parts.push(`${e.key} in (${(e.values ?? []).join(',')})`);
    else if (e.operator === 'NotIn') parts.push(`${e.key} notin (${(e.values ?? []).join(',')})`);
    else if (e.operator === 'Exists') parts.push(e.key);
    else if (e.operator === 'DoesNotExist') parts.push(`!${e.key}`);
  }
  return parts.join(',');
}

/** The version document of `/version` for `v<major>.<minor>.<patch>`. */
function versionInfo(gitVersion: string): object {
  const m = /^v(\d+)\.(\d+)/.exec(gitVersion);
  if (!m) throw new Error(`serverVersion must look like v1.32.0, got ${JSON.stringify(gitVersion)}`);
  return { major: m[1], minor: m[2], gitVersion, gitCommit: 'orch-api-test', gitTreeState: 'clean', buildDate: '2025-01-01T00:00:00Z', goVersion: 'go1.23', compiler: 'gc', platform: 'linux/amd64' };
}

function found<T>(value: T | undefined): T {
  if (value === undefined) throw pathNotFound();
  return value;
}

/** kubectl and client-go name the field manager after the program when none is given. */
function userAgentManager(userAgent: string | undefined): string | undefined {
  if (!userAgent) return undefined;
  return userAgent.split('/')[0] || undefined;
}

function deleteOptions(body: unknown, q: URLSearchParams): DeleteOptions {
  const b = (body && typeof body === 'object' ? body : {}) as Obj;
  const out: DeleteOptions = {};
  const policy = q.get('propagationPolicy') ?? b.propagationPolicy ?? (b.orphanDependents === true ? 'Orphan' : undefined);
  if (policy !== undefined) {
    if (!['Orphan', 'Background', 'Foreground'].includes(policy)) throw badRequest(`propagationPolicy: Unsupported value: "${policy}": supported values: "Foreground", "Background", "Orphan"`);
    out.propagationPolicy = policy;
  }
  const grace = q.get('gracePeriodSeconds') ?? b.gracePeriodSeconds;
  if (grace !== undefined && grace !== null) out.gracePeriodSeconds = Number(grace);
  if (b.preconditions) out.preconditions = b.preconditions;
  return out;
}

export async function readText(req: http.IncomingMessage): Promise<string> {
  return (await readBytes(req)).toString('utf8');
}

function readBytes(req: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY) {
        reject(new ApiError(413, 'RequestEntityTooLarge', `Request entity too large: limit is ${MAX_BODY}`));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      requestBodies.set(req, body);
      resolve(body);
    });
    req.on('error', reject);
  });
}

async function readJson(req: http.IncomingMessage, optional = false): Promise<unknown> {
  const contentType = (req.headers['content-type'] ?? '').split(';')[0].trim();
  if (contentType === PROTOBUF) return decodeProtobuf(await readBytes(req));
  const text = await readText(req);
  if (text.trim() === '') {
    if (optional) return undefined;
    throw badRequest('the request body is empty');
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw badRequest(`the request body is not valid JSON: ${(err as Error).message}`);
  }
}

export function sendJson(res: http.ServerResponse, status: number, body: unknown, contentType = 'application/json'): void {
  sendRaw(res, status, JSON.stringify(body), contentType);
}

function sendObject(res: http.ServerResponse, status: number, obj: Obj, warnings: string[]): void {
  if (warnings.length > 0) res.setHeader('Warning', warnings.map((w) => `299 - ${JSON.stringify(w)}`));
  sendRaw(res, status, jsonOf(obj), 'application/json');
}

export function sendRaw(res: http.ServerResponse, status: number, text: string, contentType: string): void {
  res.writeHead(status, { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(text), 'Cache-Control': 'no-cache, private' });
  res.end(text);
}

function sendText(res: http.ServerResponse, status: number, text: string): void {
  sendRaw(res, status, text, 'text/plain; charset=utf-8');
}

export function sendStatus(res: http.ServerResponse, err: ApiError): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  sendJson(res, err.code, err.status());
}


import type * as grpc from '@grpc/grpc-js';
import { grpcLibrary } from '../shared/grpc-library';
import { inject, injectable } from 'inversify';
import { DebugHandler, DebugResponse } from '../debug';
import { parseSpiffeId } from '../security/ca';
import { Settings, SettingsToken } from '../settings';
import { XdsConnection } from '../xds/connection';
import { DEBUG_TYPE, DebugQuery, DebugResource, XdsDebugError, XdsDebugService } from '../xds/debug-requests';
import { XdsServer } from '../xds/server';
import { synczResources } from '../xds/syncz';
import { DaemonFlags, DaemonFlagsToken } from './daemon-flags';
import { ConfigDumpError, DaemonDebugHandlers } from './debug-handlers';
import { systemNamespaceOf } from './orch-options';

/** Debug types a caller outside the privileged namespaces may ask (the incumbent's list; only config_dump exists here). */
const OPEN_TO_EVERY_NAMESPACE = new Set(['config_dump']);

/**
 * The daemon's answers to debug requests over xDS (the incumbent's debug generator): every
 * `/debug/<name>` page of the HTTP interface as `mesh.io/debug` + `<name>?<query>` (the page's
 * JSON as the value of one resource of type `mesh.io/debug`), `mesh.io/debug/syncz` as one
 * `ClientConfig` per proxy, and `mesh.io/debug/config_dump` with a proxy ID as the sections of
 * an Envoy admin config dump. Who may ask follows the incumbent (ENABLE_DEBUG_ENDPOINT_AUTH):
 * an authenticated caller; identities of the system namespace (and of
 * DEBUG_ENDPOINT_AUTH_ALLOWED_NAMESPACES) anything, others only config_dump of proxies in
 * their own namespace.
 */
@injectable()
export class DaemonXdsDebug implements XdsDebugService {
  private readonly authRequired: boolean;
  private readonly systemNamespace: string;
  private readonly privileged: ReadonlySet<string>;
  private readonly pages: ReadonlyMap<string, DebugHandler>;

  constructor(
    @inject(DaemonDebugHandlers) private readonly handlers: DaemonDebugHandlers,
    @inject(XdsServer) private readonly xds: XdsServer,
    @inject(SettingsToken) settings: Settings,
    @inject(DaemonFlagsToken) flags: DaemonFlags,
  ) {
    this.authRequired = settings.bool('ENABLE_DEBUG_ENDPOINT_AUTH');
    this.systemNamespace = systemNamespaceOf(flags, settings);
    const allowed = (settings.string('DEBUG_ENDPOINT_AUTH_ALLOWED_NAMESPACES') ?? '').split(',').map((n) => n.trim()).filter((n) => n !== '');
    this.privileged = new Set([this.systemNamespace, ...allowed]);
    this.pages = new Map(handlers.handlers().map((h) => [h.path.slice('/debug/'.length), h]));
  }

  /** The debug names a client may ask, sorted (`list` among them). */
  knownNames(): string[] {
    return [...this.pages.keys(), 'list'].sort();
  }

  async answer(conn: XdsConnection, query: DebugQuery): Promise<DebugResource[]> {
    if (query.name !== 'list' && !this.pages.has(query.name)) {
      throw new XdsDebugError(grpcLibrary().status.INVALID_ARGUMENT, `unknown debug type "${query.name}"; known: ${this.knownNames().join(', ')}`);
    }
    const proxyId = query.argument ?? query.query.get('proxyID') ?? '';
    this.authorize(conn, query.name, proxyId);
    if (query.typeUrl === `${DEBUG_TYPE}/syncz`) return synczResources(this.xds.connections());
    if (query.typeUrl === `${DEBUG_TYPE}/config_dump`) {
      try {
        return this.handlers.configDump(proxyId);
      } catch (err) {
        if (err instanceof ConfigDumpError) throw new XdsDebugError(grpcStatusOf(err.status), err.message);
        throw err;
      }
    }
    if (query.argument !== undefined) {
      throw new XdsDebugError(grpcLibrary().status.INVALID_ARGUMENT, `${query.typeUrl} takes a query as its resource name (e.g. ?kind=...), not "${query.argument.slice(0, 100)}"`);
    }
    const response: DebugResponse =
      query.name === 'list'
        ? { json: this.knownNames().map((name) => ({ name, description: this.pages.get(name)?.description ?? 'the debug types this daemon answers' })) }
        : await this.pages.get(query.name)!.handle(query.query, new AbortController().signal);
    const status = response.status ?? 200;
    const body = response.raw ? Buffer.from(response.raw.body) : Buffer.from(response.json !== undefined ? JSON.stringify(response.json) : (response.text ?? ''));
    if (status >= 400) throw new XdsDebugError(grpcStatusOf(status), body.toString('utf8').trim().slice(0, 1000) || `status ${status}`);
    // The page's JSON (or its own bytes: a profile) as the value.
    const value = body;
    return [{ name: query.resourceName, typeUrl: DEBUG_TYPE, value }];
  }

  /** Throws UNAUTHENTICATED or PERMISSION_DENIED when the stream's caller may not ask `name`. */
  private authorize(conn: XdsConnection, name: string, proxyId: string): void {
    if (!this.authRequired) return;
    if (conn.identities.length === 0) {
      throw new XdsDebugError(
        grpcLibrary().status.UNAUTHENTICATED,
        'debug requests need an authenticated caller: use the secure xDS port with a token of the mesh audience or a client certificate (ENABLE_DEBUG_ENDPOINT_AUTH)',
      );
    }
    const namespaces = conn.identities.map((id) => parseSpiffeId(id)?.namespace).filter((n): n is string => n !== undefined);
    if (namespaces.some((n) => this.privileged.has(n))) return;
    const who = conn.identities.join(', ');
    if (!OPEN_TO_EVERY_NAMESPACE.has(name)) {
      throw new XdsDebugError(
        grpcLibrary().status.PERMISSION_DENIED,
        `identity ${who} may not ask for ${name}: only identities of namespace ${[...this.privileged].join(', ')} may (DEBUG_ENDPOINT_AUTH_ALLOWED_NAMESPACES adds namespaces); others may ask config_dump of proxies in their own namespace`,
      );
    }
    let target: XdsConnection;
    try {
      target = this.handlers.connectionOf(proxyId);
    } catch (err) {
      if (err instanceof ConfigDumpError) throw new XdsDebugError(grpcStatusOf(err.status), err.message);
      throw err;
    }
    if (!namespaces.includes(target.proxy.namespace)) {
      throw new XdsDebugError(grpcLibrary().status.PERMISSION_DENIED, `identity ${who} may not ask for the config dump of ${target.proxy.id}: it is in namespace ${target.proxy.namespace}, not the caller's`);
    }
  }
}

/** The gRPC status of an HTTP debug page's error status. */
function grpcStatusOf(httpStatus: number): grpc.status {
  if (httpStatus === 400) return grpcLibrary().status.INVALID_ARGUMENT;
  if (httpStatus === 403) return grpcLibrary().status.PERMISSION_DENIED;
  if (httpStatus === 404) return grpcLibrary().status.NOT_FOUND;
  if (httpStatus === 503) return grpcLibrary().status.UNAVAILABLE;
  return grpcLibrary().status.INTERNAL;
}

import { isIP } from 'node:net';
import type { ConnectionInfo, ProxyHttpRequest } from '../../http/filter-api';
import type { Headers } from '../matchers/header-matcher';
import type { DynamicMetadata } from '../matchers/metadata-matcher';
import { normalizeAddress } from '../matchers/cidr';

/** What RBAC matchers look at: a request (HTTP RBAC) or only a connection (network RBAC). */
export interface RbacSubject {
  readonly connection: ConnectionInfo;
  /** Absent on a TCP connection: header matchers then see every header missing. */
  readonly headers?: Headers;
  /** `:path` with query; absent on a TCP connection, where path matchers never match. */
  readonly path?: string;
  readonly metadata: DynamicMetadata;
  /** Envoy's downstream remote address, what `remote_ip` matches. */
  readonly remoteAddress: string;
}

/**
 * The downstream remote address of a request with Envoy's connection-manager defaults
 * (`use_remote_address: false`, no trusted hops): the last valid `x-forwarded-for` entry,
 * otherwise the direct peer.
 */
export function downstreamRemoteAddress(request: ProxyHttpRequest): string {
  const xff = request.headers['x-forwarded-for'];
  if (xff !== undefined) {
    const last = normalizeAddress(xff.slice(xff.lastIndexOf(',') + 1).trim());
    if (isIP(last) !== 0) return last;
  }
  return request.connection.remoteAddress;
}

export function httpSubject(request: ProxyHttpRequest): RbacSubject {
  return {
    connection: request.connection,
    headers: request.headers,
    path: request.path,
    metadata: request.metadata,
    remoteAddress: downstreamRemoteAddress(request),
  };
}

export function connectionSubject(connection: ConnectionInfo): RbacSubject {
  return { connection, metadata: {}, remoteAddress: connection.remoteAddress };
}

import type * as grpc from '@grpc/grpc-js';
import { grpcLibrary } from '../shared/grpc-library';
import { encodeMessage } from '../envoy/protos';
import { XdsConnection } from './connection';

/**
 * Debug requests on ADS streams (the incumbent's `istio.io/debug` types): a client asks for
 * the type URL `mesh.io/debug` with one resource name `<name>[?<query>]` (`syncz`,
 * `config_dump?proxyID=<id>`...), or for `mesh.io/debug/<name>` with the query, if any, as
 * its resource name. The answer is one discovery response, never a subscription; a request
 * that cannot be answered ends the stream with a gRPC status saying why, so the client is
 * never left waiting.
 */

export const DEBUG_TYPE = 'mesh.io/debug';

export function isDebugType(typeUrl: string): boolean {
  return typeUrl === DEBUG_TYPE || typeUrl.startsWith(`${DEBUG_TYPE}/`);
}

/** A debug request refused or failed: the status the stream ends with. */
export class XdsDebugError extends Error {
  constructor(
    readonly code: grpc.status,
    message: string,
  ) {
    super(message);
  }
}

/** What is asked: the debug name, its query, and the resource name the answer carries. */
export interface DebugQuery {
  /** The request's type URL, which the response repeats. */
  typeUrl: string;
  /** `syncz`, `config_dump`, ... */
  name: string;
  query: URLSearchParams;
  /** The name of the answer's resource: the request's resource name, else the debug name. */
  resourceName: string;
  /** The resource name as sent, when it is not a query (config_dump: the proxy ID, as the incumbent sends it). */
  argument?: string;
}

/** Longer resource names are refused: a debug name and a proxy ID are short. */
const MAX_NAME_LENGTH = 4096;

/** Reads a debug request; throws XdsDebugError (INVALID_ARGUMENT) when it is malformed. */
export function parseDebugRequest(typeUrl: string, resourceNames: readonly string[]): DebugQuery {
  const names = resourceNames.filter((n) => n !== '' && n !== '*');
  if (names.length > 1) throw new XdsDebugError(grpcLibrary().status.INVALID_ARGUMENT, `a debug request names one resource, not ${names.length} (${names.slice(0, 5).join(', ')})`);
  const resource = names[0];
  if (resource !== undefined && resource.length > MAX_NAME_LENGTH) throw new XdsDebugError(grpcLibrary().status.INVALID_ARGUMENT, `the resource name of a debug request is longer than ${MAX_NAME_LENGTH} characters`);
  if (typeUrl === DEBUG_TYPE) {
    if (resource === undefined) throw new XdsDebugError(grpcLibrary().status.INVALID_ARGUMENT, `${DEBUG_TYPE} needs the debug type as its resource name, e.g. syncz or config_dump?proxyID=<proxy>`);
    const [name, search = ''] = splitQuery(resource);
    return { typeUrl, name: checkedName(name), query: new URLSearchParams(search), resourceName: resource };
  }
  const name = checkedName(typeUrl.slice(DEBUG_TYPE.length + 1));
  if (resource === undefined) return { typeUrl, name, query: new URLSearchParams(), resourceName: name };
  const [head, search] = splitQuery(resource);
  // `<name>?<query>` or `?<query>` carry a query; anything else is an argument (a proxy ID).
  if (search !== undefined && (head === '' || head === name)) return { typeUrl, name, query: new URLSearchParams(search), resourceName: resource };
  return { typeUrl, name, query: new URLSearchParams(), resourceName: resource, argument: resource };
}

function splitQuery(resource: string): [string, string | undefined] {
  const i = resource.indexOf('?');
  return i < 0 ? [resource, undefined] : [resource.slice(0, i), resource.slice(i + 1)];
}

/** A page name: segments of letters, digits, `_`, `.` and `-` (`pprof/heap`), none of them `.` or `..`. */
function checkedName(name: string): string {
  const clean = name.replace(/^\/+|\/+$/g, '');
  const segments = clean.split('/');
  if (!/^[A-Za-z0-9_.-]+(\/[A-Za-z0-9_.-]+)*$/.test(clean) || segments.some((s) => s === '.' || s === '..')) {
    throw new XdsDebugError(grpcLibrary().status.INVALID_ARGUMENT, `"${name.slice(0, 100)}" is not a debug type name`);
  }
  return clean;
}

/** One resource of a debug answer: its name, its Any type URL and the encoded value. */
export interface DebugResource {
  name: string;
  typeUrl: string;
  value: Buffer;
}

/** Answers the debug requests of every stream of a server (the daemon wires its debug interface in). */
export interface XdsDebugService {
  /**
   * The resources answering `query` asked on `conn`'s stream, after checking the caller may
   * ask it; throws XdsDebugError to refuse or fail it.
   */
  answer(conn: XdsConnection, query: DebugQuery): Promise<DebugResource[]>;
}

/** The state-of-the-world response to a debug request. */
export function encodeDebugResponse(typeUrl: string, version: string, nonce: string, resources: readonly DebugResource[], controlPlane: string): Buffer {
  return encodeMessage('envoy.service.discovery.v3.DiscoveryResponse', {
    version_info: version,
    type_url: typeUrl,
    nonce,
    resources: resources.map((r) => ({ type_url: r.typeUrl, value: r.value })),
    control_plane: { identifier: controlPlane },
  });
}

/** The delta response to a debug request: the same resources, named and versioned. */
export function encodeDeltaDebugResponse(typeUrl: string, version: string, nonce: string, resources: readonly DebugResource[], controlPlane: string): Buffer {
  return encodeMessage('envoy.service.discovery.v3.DeltaDiscoveryResponse', {
    system_version_info: version,
    type_url: typeUrl,
    nonce,
    resources: resources.map((r) => ({ name: r.name, version, resource: { type_url: r.typeUrl, value: r.value } })),
    control_plane: { identifier: controlPlane },
  });
}

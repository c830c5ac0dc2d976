import * as fs from 'node:fs';
import * as path from 'node:path';
import type * as protobuf from 'protobufjs';
import { protobufLibrary } from '../shared/protobuf-library';
import { TypeUrl } from './type-urls';

/**
 * Envoy v3 protos, loaded with protobufjs from the copies `@grpc/grpc-js-xds` ships (its
 * `deps/`), plus the few contrib protos it lacks (our `protos/`), plus those plugins bring
 * (`addEnvoyProtos`). Field names keep the proto's snake_case, so objects read like Envoy's
 * YAML; `typed_config` and other Any fields are written `{ '@type': 'type.googleapis.com/<message>', ...fields }`.
 */
const PROTO_FILES = [
  'envoy/service/discovery/v3/ads.proto',
  'envoy/config/listener/v3/listener.proto',
  'envoy/config/cluster/v3/cluster.proto',
  'envoy/config/endpoint/v3/endpoint.proto',
  'envoy/config/route/v3/route.proto',
  'envoy/admin/v3/config_dump.proto',
  'envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager.proto',
  'envoy/extensions/filters/network/tcp_proxy/v3/tcp_proxy.proto',
  'envoy/extensions/filters/network/redis_proxy/v3/redis_proxy.proto',
  'envoy/extensions/filters/network/mongo_proxy/v3/mongo_proxy.proto',
  'envoy/extensions/filters/network/rbac/v3/rbac.proto',
  'envoy/extensions/filters/http/router/v3/router.proto',
  'envoy/extensions/filters/http/fault/v3/fault.proto',
  'envoy/extensions/filters/http/cors/v3/cors.proto',
  'envoy/extensions/retry/host/previous_hosts/v3/previous_hosts.proto',
  'envoy/extensions/filters/http/rbac/v3/rbac.proto',
  'envoy/extensions/filters/http/ext_authz/v3/ext_authz.proto',
  'envoy/extensions/filters/network/ext_authz/v3/ext_authz.proto',
  'envoy/extensions/path/match/uri_template/v3/uri_template_match.proto',
  'envoy/extensions/filters/http/jwt_authn/v3/config.proto',
  'envoy/extensions/filters/listener/original_dst/v3/original_dst.proto',
  'envoy/extensions/filters/listener/tls_inspector/v3/tls_inspector.proto',
  'envoy/extensions/filters/listener/http_inspector/v3/http_inspector.proto',
  'envoy/extensions/transport_sockets/tls/v3/tls.proto',
  'envoy/extensions/transport_sockets/raw_buffer/v3/raw_buffer.proto',
  'envoy/extensions/upstreams/http/v3/http_protocol_options.proto',
  'udpa/type/v1/typed_struct.proto',
  'contrib/envoy/extensions/filters/network/mysql_proxy/v3/mysql_proxy.proto',
  'mesh/networking/nds/v1/nds.proto',
];

const STRUCT_PROTO = 'google/protobuf/struct.proto';

/** The mesh's own proto include root (`protos/` of the package), where its built-in plugins' protos live too. */
export const MESH_PROTO_ROOT = path.resolve(__dirname, '..', '..', '..', '..', 'protos');

let loaded: protobuf.Root | undefined;
/** Include roots plugins added, searched after the core ones so no plugin shadows an Envoy proto. */
const pluginRoots: string[] = [];
/** Plugin files waiting for the root to be built (it is built on first use, not at start). */
const pending: string[] = [];
/** Plugin proto files registered so far (relative to their plugin root). */
const added = new Set<string>();

function includeDirs(): string[] {
  const xdsDeps = path.join(path.dirname(require.resolve('@grpc/grpc-js-xds/package.json')), 'deps');
  return [MESH_PROTO_ROOT, ...['envoy-api', 'xds', 'googleapis', 'protoc-gen-validate'].map((d) => path.join(xdsDeps, d))];
}

/** The shared protobuf root with every message the daemon sends; loaded once per process. */
export function envoyProtos(): protobuf.Root {
  if (loaded) return loaded;
  for (const name of ['api', 'descriptor', 'source_context', 'type']) {
    // The well-known types protobufjs knows by name; proto files import them by path.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const json = require(`protobufjs/google/protobuf/${name}.json`);
    protobufLibrary().common(name, json.nested.google.nested.protobuf.nested);
  }
  const dirs = includeDirs();
  const root = new (protobufLibrary().Root)();
  root.resolvePath = (origin, target) => {
    // Struct comes from our protos/wkt (snake_case; a path not ending in google/protobuf/,
    // which protobufjs would swap for its camelCase bundled copy); other well-known types are bundled.
    if (target === STRUCT_PROTO) return path.join(dirs[0], 'wkt', 'struct.proto');
    if (target.startsWith('google/protobuf/')) return target;
    for (const dir of [...dirs, ...pluginRoots]) {
      const candidate = path.join(dir, target);
      if (fs.existsSync(candidate)) return candidate;
    }
    return protobufLibrary().util.path.resolve(origin, target);
  };
  loadFiles(root, [...PROTO_FILES, ...pending.splice(0)]);
  lookUpAnyTypesOnce(root);
  loaded = root;
  return root;
}

/**
 * protobufjs's Any wrapper finds the message of an `@type` by walking the namespace tree
 * (splitting and joining the name) on every encode, and every listener carries a dozen typed
 * configs; a connect storm spent more time there than in encoding them. Here a type is looked
 * up once per name. Everything else (no `@type`, an unknown one) still goes to the wrapper.
 */
function lookUpAnyTypesOnce(root: protobuf.Root): void {
  const any = root.lookupType('google.protobuf.Any');
  any.setup();
  const wrapper = any.fromObject.bind(any) as (object: Record<string, unknown>, depth?: number) => protobuf.Message;
  const types = new Map<string, protobuf.Type>();
  const typeOf = (name: string): protobuf.Type | undefined => {
    let type = types.get(name);
    if (!type) {
      const found = root.lookup(name);
      // Only hits are kept: a plugin may add the type later.
      if (found instanceof protobufLibrary().Type) types.set(name, (type = found));
    }
    return type;
  };
  const fromObject = (object: Record<string, unknown>, depth = 0): protobuf.Message => {
    const tagged = object?.['@type'];
    const url = typeof tagged === 'string' ? tagged : '';
    const type = url !== '' ? typeOf(url.slice(url.lastIndexOf('/') + 1)) : undefined;
    if (!type || depth > protobufLibrary().util.recursionLimit) return wrapper(object, depth);
    // As the wrapper writes it: no leading dot, and a '/' even without a prefix.
    let typeUrl = url.startsWith('.') ? url.slice(1) : url;
    if (!typeUrl.includes('/')) typeUrl = `/${typeUrl}`;
    return any.create({ type_url: typeUrl, value: type.encode(type.fromObject(object, depth + 1)).finish() });
  };
  any.fromObject = fromObject as typeof any.fromObject;
}

/**
 * Adds a plugin's proto files (paths relative to `root`, its include directory) to the shared
 * root: at once if the root is built, else when it is. Imports resolve against the core
 * directories, then every plugin root. Files already loaded are skipped.
 */
export function addEnvoyProtos(root: string, files: readonly string[]): void {
  if (!pluginRoots.includes(root)) pluginRoots.push(root);
  // Every container of a process registers its plugins' protos; only new files cost a load.
  const fresh = files.filter((f) => !added.has(f));
  if (fresh.length === 0) return;
  for (const f of fresh) added.add(f);
  if (loaded) loadFiles(loaded, fresh);
  else pending.push(...fresh);
}

function loadFiles(root: protobuf.Root, files: string[]): void {
  // protobufjs swaps any import ending in a bundled well-known name for its bundled copy before
  // asking resolvePath; hide the (camelCase) bundled Struct for this synchronous load only.
  const bundled = protobufLibrary().common as unknown as Record<string, unknown>;
  const bundledStruct = bundled[STRUCT_PROTO];
  delete bundled[STRUCT_PROTO];
  try {
    root.loadSync(files, { keepCase: true });
  } finally {
    bundled[STRUCT_PROTO] = bundledStruct;
  }
  root.resolveAll();
}

/**
 * Adds proto files (paths relative to the include directories, e.g.
 * `envoy/config/bootstrap/v3/bootstrap.proto`) to the shared root, for messages only some
 * programs need; files already loaded are skipped.
 */
export function loadMoreEnvoyProtos(files: string[]): protobuf.Root {
  const root = envoyProtos();
  loadFiles(root, files);
  return root;
}

/** The directories proto imports are resolved against (ours first, then `@grpc/grpc-js-xds/deps`). */
export function envoyProtoDirs(): string[] {
  return includeDirs();
}

const typeCache = new Map<string, protobuf.Type>();

/** The message type named by a type URL (`type.googleapis.com/envoy.config.cluster.v3.Cluster`) or full name. */
export function messageType(typeUrlOrName: string): protobuf.Type {
  const name = typeUrlOrName.slice(typeUrlOrName.lastIndexOf('/') + 1);
  let type = typeCache.get(name);
  if (!type) {
    type = envoyProtos().lookupType(name);
    typeCache.set(name, type);
  }
  return type;
}

let xdsMessagesPrepared = false;

/**
 * Loads the protos and builds the coders of the xDS messages now. A server calls this before it
 * takes streams: done lazily, the first request paid it (~0.5 s on a slow machine) with the
 * event loop blocked, /ready and every other stream waiting.
 */
export function prepareXdsMessages(): void {
  // Once per process: the daemon listens on two addresses, and setup() builds the coders anew each call.
  if (xdsMessagesPrepared) return;
  xdsMessagesPrepared = true;
  const names = [...Object.values(TypeUrl), ...['Discovery', 'DeltaDiscovery'].flatMap((m) => [`envoy.service.discovery.v3.${m}Request`, `envoy.service.discovery.v3.${m}Response`])];
  for (const name of names) messageType(name).setup();
}

/** Whether the protos are loaded (prepareXdsMessages or a first use). */
export function envoyProtosLoaded(): boolean {
  return loaded !== undefined;
}

/**
 * Encodes a plain object as the message of `typeUrl`. Wrong shapes are errors here, so a
 * generator bug surfaces at build time rather than as a proxy NACK.
 */
export function encodeMessage(typeUrl: string, object: object): Buffer {
  const type = messageType(typeUrl);
  // protobufjs's verify wants enum numbers; names ('EDS', 'V3') are fine for fromObject, so
  // only other problems are errors.
  const problem = type.verify(object);
  if (problem && !problem.endsWith('enum value expected')) throw new Error(`${type.fullName}: ${problem}`);
  return Buffer.from(type.encode(type.fromObject(object)).finish());
}

/** Decodes a message to its plain-object form (proto3 JSON style, Any as `@type`, enums as names). */
export function decodeMessage(typeUrl: string, bytes: Uint8Array): Record<string, unknown> {
  const type = messageType(typeUrl);
  return type.toObject(type.decode(bytes), { json: true, enums: String, longs: String, bytes: String }) as Record<string, unknown>;
}

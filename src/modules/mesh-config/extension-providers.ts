/**
 * `extensionProviders` (the incumbent's list, same field names): external authorizers that
 * CUSTOM AuthorizationPolicies delegate to, and tracing, logging and metrics providers.
 *
 * As the incumbent does, a provider whose fields have the wrong type makes the mesh config
 * invalid, while a provider that is well-formed but unusable (port 0, no service, a status
 * code that is not one) only gets a warning and its `problem`: it "can be ignored if not
 * used", and a policy that uses it denies the requests it would have checked.
 */
import { FieldReader, fieldPath, Mapping } from './fields';

/** The checks of `envoyExtAuthzHttp` and `envoyExtAuthzGrpc` share these. */
interface ExtAuthzCommon {
  /** `<namespace>/<host>` or a host name known to the registry. */
  service: string;
  port: number;
  /** Milliseconds; the incumbent's default is 600 s. */
  timeoutMs?: number;
  failOpen: boolean;
  clearRouteCache: boolean;
  /** An HTTP status code sent when the authorizer cannot be reached (default 403). */
  statusOnError?: number;
  includeRequestBodyInCheck?: { maxRequestBytes?: number; allowPartialMessage?: boolean; packAsBytes?: boolean };
}

export interface ExtAuthzHttpProvider extends ExtAuthzCommon {
  /** Prepended to the request path in the check request. */
  pathPrefix?: string;
  /** Request headers sent to the authorizer (exact, `prefix*` or `*suffix`, case-insensitive). */
  includeRequestHeadersInCheck: readonly string[];
  /** Headers added to every check request. */
  includeAdditionalHeadersInCheck: Readonly<Record<string, string>>;
  /** Authorizer response headers copied onto the request that goes on (allowed). */
  headersToUpstreamOnAllow: readonly string[];
  /** Authorizer response headers copied onto the client's response when denied. */
  headersToDownstreamOnDeny: readonly string[];
  /** Authorizer response headers copied onto the client's response when allowed. */
  headersToDownstreamOnAllow: readonly string[];
}

export type ExtAuthzGrpcProvider = ExtAuthzCommon;

/** A provider of some other kind (tracing, logging, metrics): its fields as written, checked for their types. */
export interface OtherProvider {
  kind: OtherProviderKind;
  service?: string;
  port?: number;
  settings: Mapping;
}

export type ExtensionProvider = { name: string; problem?: string } & (
  | { kind: 'envoyExtAuthzHttp'; envoyExtAuthzHttp: ExtAuthzHttpProvider }
  | { kind: 'envoyExtAuthzGrpc'; envoyExtAuthzGrpc: ExtAuthzGrpcProvider }
  | OtherProvider
);

/** Tracing providers (need service and port). */
const TRACING = ['zipkin', 'lightstep', 'datadog', 'stackdriver', 'opencensus', 'skywalking', 'opentelemetry'] as const;
/** Access-log providers: a file, or a service (HTTP/TCP/OpenTelemetry access log service). */
const LOGGING = ['envoyFileAccessLog', 'envoyHttpAls', 'envoyTcpAls', 'envoyOtelAls'] as const;
const METRICS = ['prometheus'] as const;
export type OtherProviderKind = (typeof TRACING)[number] | (typeof LOGGING)[number] | (typeof METRICS)[number];
const KINDS = ['envoyExtAuthzHttp', 'envoyExtAuthzGrpc', ...TRACING, ...LOGGING, ...METRICS] as const;

/** Provider kinds a `defaultProviders` list may name. */
export const PROVIDER_PURPOSE: Record<'tracing' | 'accessLogging' | 'metrics', readonly string[]> = {
  tracing: TRACING,
  accessLogging: LOGGING,
  metrics: [...METRICS, 'stackdriver'],
};

/** The incumbent's built-in providers (its cloud one left out): Prometheus metrics, and access logs to stdout. */
export const DEFAULT_EXTENSION_PROVIDERS: readonly ExtensionProvider[] = Object.freeze([
  { name: 'prometheus', kind: 'prometheus', settings: {} },
  { name: 'envoy', kind: 'envoyFileAccessLog', settings: { path: '/dev/stdout' } },
] as ExtensionProvider[]);

/** HTTP status codes Envoy's StatusCode enum has (what `statusOnError` may say). */
const STATUS_CODES = new Set([
  100, 200, 201, 202, 203, 204, 205, 206, 207, 208, 226, 300, 301, 302, 303, 304, 305, 307, 308, 400, 401, 402, 403, 404, 405, 406, 407, 408, 409, 410, 411, 412, 413,
  414, 415, 416, 417, 421, 422, 423, 424, 426, 428, 429, 431, 500, 501, 502, 503, 504, 505, 506, 507, 508, 510, 511,
]);

const HTTP_FIELDS = [
  'service', 'port', 'timeout', 'pathPrefix', 'failOpen', 'clearRouteCache', 'statusOnError', 'includeRequestHeadersInCheck', 'includeHeadersInCheck',
  'includeAdditionalHeadersInCheck', 'includeRequestBodyInCheck', 'headersToUpstreamOnAllow', 'headersToDownstreamOnDeny', 'headersToDownstreamOnAllow',
];
const GRPC_FIELDS = ['service', 'port', 'timeout', 'failOpen', 'clearRouteCache', 'statusOnError', 'includeRequestBodyInCheck'];

/** The `extensionProviders` list of one layer; names must be present and unique within it. */
export function parseExtensionProviders(raw: unknown, fields: FieldReader, path: string): ExtensionProvider[] | undefined {
  const list = fields.list(raw, path, 'a list of providers');
  if (list === undefined) return undefined;
  const seen = new Set<string>();
  return list.map((item, i) => {
    const p = fieldPath(path, i);
    const entry = fields.mapping(item, p) ?? fields.fail(p, 'must be a mapping (name and one provider)');
    const name = fields.string(entry.name, fieldPath(p, 'name'), { nonEmpty: true }) ?? fields.fail(fieldPath(p, 'name'), 'is required');
    if (seen.has(name)) fields.fail(fieldPath(p, 'name'), `${JSON.stringify(name)} is used by another provider: names must be unique`);
    seen.add(name);
    const kinds = KINDS.filter((k) => entry[k] !== undefined && entry[k] !== null);
    if (kinds.length === 0) {
      const others = Object.keys(entry).filter((k) => k !== 'name');
      // A provider of a kind this mesh does not know: kept out, named in a warning.
      fields.warn(p, `provider ${JSON.stringify(name)} has no provider this mesh knows (${others.join(', ') || 'none given'}; known: ${KINDS.join(', ')}): ignored`);
      return undefined;
    }
    if (kinds.length > 1) fields.fail(p, `provider ${JSON.stringify(name)} sets ${kinds.join(' and ')}: exactly one provider per entry`);
    fields.unknownFields(entry, p, new Set(['name', ...KINDS]));
    const kind = kinds[0];
    const kp = fieldPath(p, kind);
    const body = fields.mapping(entry[kind], kp) ?? {};
    const problems: string[] = [];
    let provider: ExtensionProvider;
    if (kind === 'envoyExtAuthzHttp') provider = { name, kind, envoyExtAuthzHttp: extAuthzHttpOf(body, fields, kp, problems) };
    else if (kind === 'envoyExtAuthzGrpc') provider = { name, kind, envoyExtAuthzGrpc: extAuthzCommonOf(body, fields, kp, problems, GRPC_FIELDS) };
    else provider = { name, ...otherOf(kind, body, fields, kp, problems) };
    if (problems.length > 0) {
      provider.problem = problems.join('; ');
      fields.warn(kp, `provider ${JSON.stringify(name)} cannot be used: ${provider.problem} (policies that use it deny what they would check)`);
    }
    return provider;
  }).filter((p): p is ExtensionProvider => p !== undefined);
}

/** Layering, as the incumbent merges mesh configs: a provider of a known name is replaced, a new one appended. */
export function mergeExtensionProviders(base: readonly ExtensionProvider[], layer: readonly ExtensionProvider[]): ExtensionProvider[] {
  const out = [...base];
  for (const p of layer) {
    const at = out.findIndex((e) => e.name === p.name);
    if (at >= 0) out[at] = p;
    else out.push(p);
  }
  return out;
}

function extAuthzCommonOf(body: Mapping, fields: FieldReader, path: string, problems: string[], known: readonly string[]): ExtAuthzCommon {
  const f = (k: string) => fieldPath(path, k);
  const service = fields.string(body.service, f('service')) ?? '';
  if (service === '') problems.push('service must not be empty');
  const port = fields.int(body.port, f('port'), 0, Number.MAX_SAFE_INTEGER) ?? 0;
  if (port < 1 || port > 65535) problems.push(`port must be in the range [1, 65535], found: ${port}`);
  const status = fields.string(body.statusOnError, f('statusOnError'));
  let statusOnError: number | undefined;
  if (status !== undefined && status !== '') {
    statusOnError = /^\d+$/.test(status) ? Number(status) : NaN;
    if (!STATUS_CODES.has(statusOnError)) problems.push(`unsupported statusOnError ${JSON.stringify(status)}: not an HTTP status code Envoy knows`);
  }
  const out: ExtAuthzCommon = {
    service,
    port,
    timeoutMs: fields.durationMs(body.timeout, f('timeout')),
    failOpen: fields.bool(body.failOpen, f('failOpen')) ?? false,
    clearRouteCache: fields.bool(body.clearRouteCache, f('clearRouteCache')) ?? false,
    statusOnError,
  };
  const bodyCheck = fields.mapping(body.includeRequestBodyInCheck, f('includeRequestBodyInCheck'));
  if (bodyCheck) {
    const bp = f('includeRequestBodyInCheck');
    out.includeRequestBodyInCheck = {
      maxRequestBytes: fields.int(bodyCheck.maxRequestBytes, fieldPath(bp, 'maxRequestBytes'), 0, 4294967295),
      allowPartialMessage: fields.bool(bodyCheck.allowPartialMessage, fieldPath(bp, 'allowPartialMessage')),
      packAsBytes: fields.bool(bodyCheck.packAsBytes, fieldPath(bp, 'packAsBytes')),
    };
    fields.unknownFields(bodyCheck, bp, new Set(['maxRequestBytes', 'allowPartialMessage', 'packAsBytes']));
  }
  fields.unknownFields(body, path, new Set(known));
  return out;
}

function extAuthzHttpOf(body: Mapping, fields: FieldReader, path: string, problems: string[]): ExtAuthzHttpProvider {
  const common = extAuthzCommonOf(body, fields, path, problems, HTTP_FIELDS);
  const f = (k: string) => fieldPath(path, k);
  const pathPrefix = fields.string(body.pathPrefix, f('pathPrefix'));
  if (pathPrefix && !pathPrefix.startsWith('/')) problems.push(`pathPrefix must begin with \`/\`, found: ${JSON.stringify(pathPrefix)}`);
  const headers = (key: string) => {
    const list = fields.stringList(body[key], f(key)) ?? [];
    if (list.includes('*')) problems.push(`a single wildcard ("*") is not supported, change it to either prefix or suffix match: ${key}`);
    return list;
  };
  let includeRequestHeadersInCheck = headers('includeRequestHeadersInCheck');
  const deprecated = headers('includeHeadersInCheck');
  // includeHeadersInCheck is the deprecated name, used only when the new one is not set.
  if (includeRequestHeadersInCheck.length === 0) includeRequestHeadersInCheck = deprecated;
  return {
    ...common,
    pathPrefix: pathPrefix || undefined,
    includeRequestHeadersInCheck,
    includeAdditionalHeadersInCheck: fields.stringMap(body.includeAdditionalHeadersInCheck, f('includeAdditionalHeadersInCheck')) ?? {},
    headersToUpstreamOnAllow: headers('headersToUpstreamOnAllow'),
    headersToDownstreamOnDeny: headers('headersToDownstreamOnDeny'),
    headersToDownstreamOnAllow: headers('headersToDownstreamOnAllow'),
  };
}

/** Tracing, logging and metrics providers: typed checks of the fields they share; the rest kept as written. */
function otherOf(kind: OtherProviderKind, body: Mapping, fields: FieldReader, path: string, problems: string[]): OtherProvider {
  const f = (k: string) => fieldPath(path, k);
  const out: OtherProvider = { kind, settings: body };
  out.service = fields.string(body.service, f('service'));
  if (body.port !== undefined) out.port = fields.int(body.port, f('port'), 0, Number.MAX_SAFE_INTEGER);
  fields.int(body.maxTagLength, f('maxTagLength'), 0, 1_000_000);
  fields.string(body.logName, f('logName'));
  const needsService = (TRACING as readonly string[]).includes(kind) || kind === 'envoyHttpAls' || kind === 'envoyTcpAls' || kind === 'envoyOtelAls';
  if (needsService) {
    if (!out.service) problems.push('service must not be empty');
    if (out.port === undefined || out.port < 1 || out.port > 65535) problems.push(`port must be in the range [1, 65535], found: ${out.port ?? 0}`);
  }
  if (kind === 'envoyFileAccessLog') {
    fields.string(body.path, f('path'));
    const format = fields.mapping(body.logFormat, f('logFormat'));
    if (format) {
      if (format.text !== undefined && format.labels !== undefined) fields.fail(f('logFormat'), 'sets text and labels: only one may be set');
      fields.string(format.text, fieldPath(f('logFormat'), 'text'));
      fields.mapping(format.labels, fieldPath(f('logFormat'), 'labels'));
    }
  }
  return out;
}

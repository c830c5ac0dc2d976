import { Type } from 'class-transformer';
import {
  IsArray, IsBoolean, IsDefined, IsIn, IsInt, IsNumber, IsObject, IsOptional, IsString, Max, Min, registerDecorator, ValidateNested,
  ValidationArguments, ValidationOptions,
} from 'class-validator';
import { Duration } from '../../settings/duration';
import { compileRe2, re2Problem, rewriteProblem } from '../../shared/re2';
import { FieldIssue, KindDefinition, NETWORKING_VERSIONS } from '../kind';
import { IsIPOrCIDR, isMeshHost, IsMeshHost, IsPortNumber, IsStringMap } from './common';
import { routeReachabilityWarnings } from './route-reachability';

/** Why `v` is not a duration of at least `min` with millisecond precision (what the proxy config can carry), or undefined. */
export function durationProblem(v: unknown, min = '1ms'): string | undefined {
  if (typeof v !== 'string') return 'must be a duration such as 5s or 100ms';
  let d: Duration;
  try {
    d = Duration.parse(v);
  } catch {
    return `"${v}" is not a duration (e.g. 5s, 100ms, 1h30m)`;
  }
  if (d.nanos < Duration.parse(min).nanos) return `must be at least ${min}`;
  if (d.nanos % 1_000_000n !== 0n) return 'only millisecond precision is supported';
  return undefined;
}

export function IsDuration(min = '1ms', options?: ValidationOptions) {
  return (target: object, propertyName: string) =>
    registerDecorator({
      name: 'isDuration',
      target: target.constructor,
      propertyName,
      options: { message: (a: ValidationArguments) => durationProblem(a.value, min) ?? '', ...options },
      validator: { validate: (v: unknown) => durationProblem(v, min) === undefined },
    });
}

/** Exactly one of the three is set; checked by `checkStringMatch`. */
export class StringMatch {
  @IsOptional() @IsString() exact?: string;
  @IsOptional() @IsString() prefix?: string;
  @IsOptional() @IsString() regex?: string;
}

export class PortSelector {
  @IsPortNumber() number!: number;
}

export class Destination {
  @IsMeshHost() host!: string;
  @IsOptional() @IsString() subset?: string;
  @IsOptional() @ValidateNested() @Type(() => PortSelector) port?: PortSelector;
}

export class HeaderOperations {
  @IsOptional() @IsStringMap() set?: Record<string, string>;
  @IsOptional() @IsStringMap() add?: Record<string, string>;
  @IsOptional() @IsArray() @IsString({ each: true }) remove?: string[];
}

export class Headers {
  @IsOptional() @ValidateNested() @Type(() => HeaderOperations) request?: HeaderOperations;
  @IsOptional() @ValidateNested() @Type(() => HeaderOperations) response?: HeaderOperations;
}

export class HTTPMatchRequest {
  @IsOptional() @IsString() name?: string;
  @IsOptional() @ValidateNested() @Type(() => StringMatch) uri?: StringMatch;
  @IsOptional() @ValidateNested() @Type(() => StringMatch) scheme?: StringMatch;
  @IsOptional() @ValidateNested() @Type(() => StringMatch) method?: StringMatch;
  @IsOptional() @ValidateNested() @Type(() => StringMatch) authority?: StringMatch;
  /** Header name → StringMatch; entries are checked by the kind's check (the key is part of the path). */
  @IsOptional() @IsObject() headers?: Record<string, StringMatch>;
  @IsOptional() @IsObject() withoutHeaders?: Record<string, StringMatch>;
  @IsOptional() @IsObject() queryParams?: Record<string, StringMatch>;
  @IsOptional() @IsPortNumber() port?: number;
  @IsOptional() @IsStringMap() sourceLabels?: Record<string, string>;
  @IsOptional() @IsArray() @IsString({ each: true }) gateways?: string[];
  @IsOptional() @IsString() sourceNamespace?: string;
  @IsOptional() @IsBoolean() ignoreUriCase?: boolean;
  @IsOptional() @IsString() statPrefix?: string;
}

export class HTTPRouteDestination {
  @IsDefined({ message: 'required' }) @ValidateNested() @Type(() => Destination) destination!: Destination;
  @IsOptional() @IsInt() @Min(0) @Max(100) weight?: number;
  @IsOptional() @ValidateNested() @Type(() => Headers) headers?: Headers;
}

export class HTTPRedirect {
  @IsOptional() @IsString() uri?: string;
  @IsOptional() @IsString() authority?: string;
  @IsOptional() @IsPortNumber() port?: number;
  @IsOptional() @IsIn(['FROM_PROTOCOL_DEFAULT', 'FROM_REQUEST_PORT']) derivePort?: string;
  @IsOptional() @IsString() scheme?: string;
  @IsOptional() @IsInt() @Min(300) @Max(399) redirectCode?: number;
}

export class HTTPBody {
  @IsOptional() @IsString() string?: string;
  /** base64 */
  @IsOptional() @IsString() bytes?: string;
}

export class HTTPDirectResponse {
  @IsInt() @Min(200) @Max(599) status!: number;
  @IsOptional() @ValidateNested() @Type(() => HTTPBody) body?: HTTPBody;
}

export class Delegate {
  @IsString() name!: string;
  @IsOptional() @IsString() namespace?: string;
}

export class RegexRewrite {
  @IsString() match!: string;
  @IsString() rewrite!: string;
}

export class HTTPRewrite {
  @IsOptional() @IsString() uri?: string;
  @IsOptional() @IsString() authority?: string;
  @IsOptional() @ValidateNested() @Type(() => RegexRewrite) uriRegexRewrite?: RegexRewrite;
}

export class HTTPRetry {
  @IsOptional() @IsInt() @Min(0) attempts?: number;
  @IsOptional() @IsDuration() perTryTimeout?: string;
  /** Comma-separated retry conditions or HTTP status codes. */
  @IsOptional() @IsString() retryOn?: string;
  @IsOptional() @IsBoolean() retryRemoteLocalities?: boolean;
}

export class Percent {
  @IsNumber() @Min(0) @Max(100) value!: number;
}

export class FaultDelay {
  @IsDuration() fixedDelay!: string;
  @IsOptional() @ValidateNested() @Type(() => Percent) percentage?: Percent;
}

export class FaultAbort {
  @IsOptional() @IsInt() @Min(200) @Max(599) httpStatus?: number;
  @IsOptional() @IsString() grpcStatus?: string;
  @IsOptional() @IsString() http2Error?: string;
  @IsOptional() @ValidateNested() @Type(() => Percent) percentage?: Percent;
}

export class HTTPFaultInjection {
  @IsOptional() @ValidateNested() @Type(() => FaultDelay) delay?: FaultDelay;
  @IsOptional() @ValidateNested() @Type(() => FaultAbort) abort?: FaultAbort;
}

export class CorsPolicy {
  @IsOptional() @IsArray() @ValidateNested({ each: true }) @Type(() => StringMatch) allowOrigins?: StringMatch[];
  @IsOptional() @IsArray() @IsString({ each: true }) allowMethods?: string[];
  @IsOptional() @IsArray() @IsString({ each: true }) allowHeaders?: string[];
  @IsOptional() @IsArray() @IsString({ each: true }) exposeHeaders?: string[];
  @IsOptional() @IsDuration('0s') maxAge?: string;
  @IsOptional() @IsBoolean() allowCredentials?: boolean;
  @IsOptional() @IsIn(['FORWARD', 'IGNORE']) unmatchedPreflights?: string;
}

export class HTTPRoute {
  @IsOptional() @IsString() name?: string;
  @IsOptional() @IsArray() @ValidateNested({ each: true }) @Type(() => HTTPMatchRequest) match?: HTTPMatchRequest[];
  @IsOptional() @IsArray() @ValidateNested({ each: true }) @Type(() => HTTPRouteDestination) route?: HTTPRouteDestination[];
  @IsOptional() @ValidateNested() @Type(() => HTTPRedirect) redirect?: HTTPRedirect;
  @IsOptional() @ValidateNested() @Type(() => HTTPDirectResponse) directResponse?: HTTPDirectResponse;
  @IsOptional() @ValidateNested() @Type(() => Delegate) delegate?: Delegate;
  @IsOptional() @ValidateNested() @Type(() => HTTPRewrite) rewrite?: HTTPRewrite;
  /** 0s disables the timeout. */
  @IsOptional() @IsDuration('0s') timeout?: string;
  @IsOptional() @ValidateNested() @Type(() => HTTPRetry) retries?: HTTPRetry;
  @IsOptional() @ValidateNested() @Type(() => HTTPFaultInjection) fault?: HTTPFaultInjection;
  @IsOptional() @ValidateNested() @Type(() => Destination) mirror?: Destination;
  @IsOptional() @ValidateNested() @Type(() => Percent) mirrorPercentage?: Percent;
  @IsOptional() @ValidateNested() @Type(() => CorsPolicy) corsPolicy?: CorsPolicy;
  @IsOptional() @ValidateNested() @Type(() => Headers) headers?: Headers;
}

export class L4MatchAttributes {
  @IsOptional() @IsArray() @IsIPOrCIDR({ each: true }) destinationSubnets?: string[];
  @IsOptional() @IsPortNumber() port?: number;
  @IsOptional() @IsStringMap() sourceLabels?: Record<string, string>;
  @IsOptional() @IsArray() @IsString({ each: true }) gateways?: string[];
  @IsOptional() @IsString() sourceNamespace?: string;
}

export class TLSMatchAttributes extends L4MatchAttributes {
  @IsArray() @IsString({ each: true }) sniHosts!: string[];
}

export class RouteDestination {
  @IsDefined({ message: 'required' }) @ValidateNested() @Type(() => Destination) destination!: Destination;
  @IsOptional() @IsInt() @Min(0) @Max(100) weight?: number;
}

export class TCPRoute {
  @IsOptional() @IsArray() @ValidateNested({ each: true }) @Type(() => L4MatchAttributes) match?: L4MatchAttributes[];
  @IsOptional() @IsArray() @ValidateNested({ each: true }) @Type(() => RouteDestination) route?: RouteDestination[];
}

export class TLSRoute {
  @IsOptional() @IsArray() @ValidateNested({ each: true }) @Type(() => TLSMatchAttributes) match?: TLSMatchAttributes[];
  @IsOptional() @IsArray() @ValidateNested({ each: true }) @Type(() => RouteDestination) route?: RouteDestination[];
}

/** Traffic routing for a set of hosts: networking.mesh.io VirtualService. */
export class VirtualServiceSpec {
  /** Required (checked with a clearer message than @ArrayNotEmpty gives). */
  @IsOptional() @IsArray() @IsString({ each: true }) hosts?: string[];
  @IsOptional() @IsArray() @IsString({ each: true }) gateways?: string[];
  @IsOptional() @IsArray() @ValidateNested({ each: true }) @Type(() => HTTPRoute) http?: HTTPRoute[];
  @IsOptional() @IsArray() @ValidateNested({ each: true }) @Type(() => TCPRoute) tcp?: TCPRoute[];
  @IsOptional() @IsArray() @ValidateNested({ each: true }) @Type(() => TLSRoute) tls?: TLSRoute[];
  @IsOptional() @IsArray() @IsString({ each: true }) exportTo?: string[];
}

// Conditions the proxy understands in retryOn, besides bare HTTP status codes.
const RETRY_ON = new Set([
  '5xx', 'gateway-error', 'reset', 'reset-before-request', 'connect-failure', 'envoy-ratelimited', 'retriable-4xx', 'refused-stream',
  'retriable-status-codes', 'retriable-headers', 'http3-post-connect-failure',
  'cancelled', 'deadline-exceeded', 'internal', 'resource-exhausted', 'unavailable',
]);
const GATEWAY_REF = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?\/)?[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

export function checkStringMatch(m: unknown, at: string): FieldIssue[] {
  if (typeof m !== 'object' || m === null || Array.isArray(m)) return [{ field: at, message: 'must be a match with one of exact, prefix or regex' }];
  const entries = Object.entries(m as Record<string, unknown>).filter(([, v]) => v !== undefined);
  const unknown = entries.filter(([k]) => !['exact', 'prefix', 'regex'].includes(k));
  if (unknown.length) return unknown.map(([k]) => ({ field: `${at}.${k}`, message: 'unknown field' }));
  if (entries.length !== 1) return [{ field: at, message: 'set exactly one of exact, prefix or regex' }];
  const [kind, value] = entries[0];
  if (typeof value !== 'string') return [{ field: `${at}.${kind}`, message: 'must be a string' }];
  return kind === 'regex' ? regexIssues(value, `${at}.regex`) : [];
}

/** Proxies run regexes as RE2 (Envoy and the built-in proxy alike), so RE2 decides what is valid. */
export function regexIssues(pattern: string, at: string): FieldIssue[] {
  const problem = re2Problem(pattern);
  return problem === undefined ? [] : [{ field: at, message: `invalid RE2 regular expression: ${problem}` }];
}

/** `uriRegexRewrite`: an RE2 `match`, and a `rewrite` whose `\N` groups that pattern has. */
function regexRewriteIssues(rewrite: RegexRewrite, at: string): FieldIssue[] {
  const matchIssues = regexIssues(rewrite.match, `${at}.match`);
  if (matchIssues.length) return matchIssues;
  const problem = rewriteProblem(rewrite.rewrite, compileRe2(rewrite.match).groupCount());
  return problem === undefined ? [] : [{ field: `${at}.rewrite`, message: `invalid RE2 rewrite: ${problem}` }];
}

function checkMatchMap(map: Record<string, unknown> | undefined, at: string): FieldIssue[] {
  return Object.entries(map ?? {}).flatMap(([name, m]) =>
    name === '' ? [{ field: at, message: 'names must not be empty' }] : checkStringMatch(m, `${at}.${name}`),
  );
}

/** Weights of a route list: when any is set in a list of several, they must add up to 100. */
export function checkWeights(route: readonly { weight?: number }[], at: string): FieldIssue[] {
  if (route.length < 2 || route.every((r) => r.weight === undefined)) return [];
  const total = route.reduce((sum, r) => sum + (r.weight ?? 0), 0);
  return total === 100 ? [] : [{ field: at, message: `destination weights add up to ${total}, not 100` }];
}

function checkL4Route(route: RouteDestination[] | undefined, at: string): FieldIssue[] {
  if (!route?.length) return [{ field: at, message: 'at least one destination is required' }];
  return checkWeights(route, at);
}

function checkHttpMatch(m: HTTPMatchRequest, at: string): FieldIssue[] {
  const issues: FieldIssue[] = [];
  for (const key of ['uri', 'scheme', 'method', 'authority'] as const) {
    if (m[key] !== undefined) issues.push(...checkStringMatch(m[key], `${at}.${key}`));
  }
  issues.push(...checkMatchMap(m.headers, `${at}.headers`), ...checkMatchMap(m.withoutHeaders, `${at}.withoutHeaders`));
  issues.push(...checkMatchMap(m.queryParams, `${at}.queryParams`));
  return issues;
}

function checkHttpRoute(r: HTTPRoute, at: string): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const hasRoute = (r.route?.length ?? 0) > 0;
  if (r.delegate && (hasRoute || r.redirect || r.directResponse)) {
    issues.push({ field: `${at}.delegate`, message: 'a delegating route cannot also have route, redirect or directResponse' });
  } else if (r.redirect && hasRoute) issues.push({ field: `${at}.redirect`, message: 'cannot be combined with route' });
  else if (r.directResponse && (hasRoute || r.redirect)) issues.push({ field: `${at}.directResponse`, message: 'cannot be combined with route or redirect' });
  else if (!hasRoute && !r.redirect && !r.directResponse && !r.delegate) {
    issues.push({ field: at, message: 'needs a route, redirect, directResponse or delegate' });
  }
  if (r.rewrite && r.redirect) issues.push({ field: `${at}.rewrite`, message: 'cannot be combined with redirect' });
  (r.match ?? []).forEach((m, i) => issues.push(...checkHttpMatch(m, `${at}.match[${i}]`)));
  issues.push(...checkWeights(r.route ?? [], `${at}.route`));
  if (r.redirect) {
    const rd = r.redirect;
    if (!rd.uri && !rd.authority && !rd.scheme && !rd.port && !rd.derivePort) {
      issues.push({ field: `${at}.redirect`, message: 'must set at least one of uri, authority, scheme, port or derivePort' });
    }
    if (rd.port && rd.derivePort) issues.push({ field: `${at}.redirect.derivePort`, message: 'cannot be combined with port' });
  }
  if (r.directResponse?.body?.string !== undefined && r.directResponse.body.bytes !== undefined) {
    issues.push({ field: `${at}.directResponse.body`, message: 'set string or bytes, not both' });
  }
  if (r.rewrite) {
    const rw = r.rewrite;
    if (rw.uri !== undefined && rw.uriRegexRewrite) issues.push({ field: `${at}.rewrite.uriRegexRewrite`, message: 'cannot be combined with uri' });
    if (rw.uri === undefined && rw.authority === undefined && !rw.uriRegexRewrite) {
      issues.push({ field: `${at}.rewrite`, message: 'must set uri, authority or uriRegexRewrite' });
    }
    if (rw.uriRegexRewrite) issues.push(...regexRewriteIssues(rw.uriRegexRewrite, `${at}.rewrite.uriRegexRewrite`));
  }
  if (r.retries?.retryOn !== undefined) {
    r.retries.retryOn.split(',').map((s) => s.trim()).forEach((cond) => {
      if (!RETRY_ON.has(cond) && !/^[1-5]\d\d$/.test(cond)) {
        issues.push({ field: `${at}.retries.retryOn`, message: `"${cond}" is neither a known retry condition nor an HTTP status code` });
      }
    });
  }
  if (r.fault) {
    if (!r.fault.delay && !r.fault.abort) issues.push({ field: `${at}.fault`, message: 'must set delay or abort' });
    const a = r.fault.abort;
    if (a && [a.httpStatus, a.grpcStatus, a.http2Error].filter((x) => x !== undefined).length !== 1) {
      issues.push({ field: `${at}.fault.abort`, message: 'set exactly one of httpStatus, grpcStatus or http2Error' });
    }
  }
  (r.corsPolicy?.allowOrigins ?? []).forEach((o, i) => issues.push(...checkStringMatch(o, `${at}.corsPolicy.allowOrigins[${i}]`)));
  return issues;
}

/** A TLS route's SNI host must be one the VirtualService is for (or within one of its wildcards). */
function coveredBy(sni: string, host: string): boolean {
  if (host === '*' || host === sni) return true;
  return host.startsWith('*.') && sni.endsWith(host.slice(1));
}

export function checkVirtualService(spec: VirtualServiceSpec): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const hosts = spec.hosts ?? [];
  if (hosts.length === 0) issues.push({ field: 'spec.hosts', message: 'at least one host is required' });
  const gateways = spec.gateways ?? [];
  const boundToMesh = gateways.length === 0 || gateways.includes('mesh');
  hosts.forEach((h, i) => {
    if (!isMeshHost(h)) issues.push({ field: `spec.hosts[${i}]`, message: `"${h}" is not a host name such as reviews, reviews.foo.svc.cluster.local or *.example.com` });
    else if (h === '*' && boundToMesh) issues.push({ field: `spec.hosts[${i}]`, message: 'the wildcard host * is not allowed for routes applied to the mesh (sidecars)' });
  });
  gateways.forEach((g, i) => {
    if (g !== 'mesh' && !GATEWAY_REF.test(g)) issues.push({ field: `spec.gateways[${i}]`, message: `"${g}" is not "mesh" or a gateway name [namespace/]name` });
  });
  (spec.http ?? []).forEach((r, i) => issues.push(...checkHttpRoute(r, `spec.http[${i}]`)));
  (spec.tcp ?? []).forEach((r, i) => issues.push(...checkL4Route(r.route, `spec.tcp[${i}].route`)));
  (spec.tls ?? []).forEach((r, i) => {
    const at = `spec.tls[${i}]`;
    if (!r.match?.length) issues.push({ field: `${at}.match`, message: 'at least one match with sniHosts is required' });
    (r.match ?? []).forEach((m, j) => {
      if (m.sniHosts.length === 0) issues.push({ field: `${at}.match[${j}].sniHosts`, message: 'at least one SNI host is required' });
      m.sniHosts.forEach((sni, k) => {
        const field = `${at}.match[${j}].sniHosts[${k}]`;
        if (!isMeshHost(sni)) issues.push({ field, message: `"${sni}" is not a host name` });
        else if (hosts.length && !hosts.some((h) => coveredBy(sni, h))) issues.push({ field, message: `"${sni}" is not one of this VirtualService's hosts` });
      });
    });
    issues.push(...checkL4Route(r.route, `${at}.route`));
  });
  return issues;
}

export const VirtualServiceKind: KindDefinition<VirtualServiceSpec> = {
  kind: 'VirtualService',
  group: 'networking.mesh.io',
  versions: NETWORKING_VERSIONS,
  specClass: VirtualServiceSpec,
  check: (r) => checkVirtualService(r.spec),
  warn: (r) => routeReachabilityWarnings(r.spec),
};

import { Type } from 'class-transformer';
import { IsArray, IsBoolean, IsNotEmpty, IsOptional, IsString, ValidateNested } from 'class-validator';
import { Duration } from '../../settings/duration';
import { FieldIssue, KindDefinition, SECURITY_VERSIONS } from '../kind';
import { IsStringMap } from './common';

/** Workloads a policy applies to, by their labels (unset: every workload of the namespace). */
export class WorkloadSelector {
  @IsOptional() @IsStringMap() matchLabels?: Record<string, string>;
}

/** A resource a policy is attached to instead of a selector (a Service, ServiceEntry or Gateway). */
export class PolicyTargetReference {
  /** Empty (or `core`) for a Service. */
  @IsOptional() @IsString() group?: string;
  @IsString() @IsNotEmpty() kind!: string;
  @IsString() @IsNotEmpty() name!: string;
  /** Accepted for the incumbent's shape, but cross-namespace references are rejected by the checks. */
  @IsOptional() @IsString() namespace?: string;
}

/** The fields every security policy uses to say what it applies to. */
export interface PolicyScope {
  selector?: WorkloadSelector;
  targetRef?: PolicyTargetReference;
  targetRefs?: PolicyTargetReference[];
}

/** group/kind pairs a policy may target; the version is not checked. */
const TARGETABLE = ['core/Service', 'networking.mesh.io/ServiceEntry', 'gateway.networking.k8s.io/Gateway', 'gateway.networking.k8s.io/GatewayClass'];

/** Selector labels: no empty keys and no wildcards, since selection is by exact label match. */
export function checkSelector(selector: WorkloadSelector | undefined): FieldIssue[] {
  const issues: FieldIssue[] = [];
  for (const [key, value] of Object.entries(selector?.matchLabels ?? {})) {
    const field = `spec.selector.matchLabels.${key}`;
    if (key === '') issues.push({ field: 'spec.selector.matchLabels', message: 'label keys must not be empty' });
    else if (key.includes('*') || value.includes('*')) issues.push({ field, message: `wildcards are not supported in selectors ("${key}=${value}")` });
  }
  return issues;
}

/** selector / targetRef / targetRefs: at most one of them, and references only to kinds a policy can attach to. */
export function checkPolicyScope(spec: PolicyScope): FieldIssue[] {
  const issues = checkSelector(spec.selector);
  const set = [
    spec.selector && 'spec.selector',
    spec.targetRef && 'spec.targetRef',
    spec.targetRefs?.length && 'spec.targetRefs',
  ].filter((f): f is string => typeof f === 'string');
  // Report on the later field(s): the first one set is taken as the intended scope.
  for (const field of set.slice(1)) issues.push({ field, message: 'only one of selector, targetRef or targetRefs may be set' });
  if (spec.targetRef) issues.push(...checkTargetRef(spec.targetRef, 'spec.targetRef'));
  (spec.targetRefs ?? []).forEach((ref, i) => issues.push(...checkTargetRef(ref, `spec.targetRefs[${i}]`)));
  return issues;
}

function checkTargetRef(ref: PolicyTargetReference, at: string): FieldIssue[] {
  const issues: FieldIssue[] = [];
  if (ref.namespace) issues.push({ field: `${at}.namespace`, message: 'must not be set: cross-namespace references are not supported' });
  const group = ref.group || 'core';
  if (!TARGETABLE.includes(`${group}/${ref.kind}`)) {
    issues.push({ field: `${at}.kind`, message: `cannot target ${ref.group ?? ''}/${ref.kind}; one of ${TARGETABLE.join(', ')}` });
  }
  return issues;
}

export class JwtHeader {
  @IsString() @IsNotEmpty() name!: string;
  /** Stripped before decoding, e.g. `Bearer `. */
  @IsOptional() @IsString() prefix?: string;
}

export class ClaimToHeader {
  @IsString() header!: string;
  @IsString() claim!: string;
}

/** One accepted token issuer and how to find and verify its tokens. */
export class JwtRule {
  /** Must equal the token's `iss`; may be left out when jwksUri is set. */
  @IsOptional() @IsString() issuer?: string;
  @IsOptional() @IsArray() @IsString({ each: true }) audiences?: string[];
  @IsOptional() @IsString() jwksUri?: string;
  /** The key set inline, as a JSON string. */
  @IsOptional() @IsString() jwks?: string;
  @IsOptional() @IsArray() @ValidateNested({ each: true }) @Type(() => JwtHeader) fromHeaders?: JwtHeader[];
  @IsOptional() @IsArray() @IsString({ each: true }) fromParams?: string[];
  @IsOptional() @IsArray() @IsString({ each: true }) fromCookies?: string[];
  @IsOptional() @IsString() outputPayloadToHeader?: string;
  @IsOptional() @IsBoolean() forwardOriginalToken?: boolean;
  @IsOptional() @IsArray() @ValidateNested({ each: true }) @Type(() => ClaimToHeader) outputClaimToHeaders?: ClaimToHeader[];
  /** How long fetching jwksUri may take, e.g. `5s`. */
  @IsOptional() @IsString() timeout?: string;
}

/** Which JWTs the selected workloads accept: security.mesh.io RequestAuthentication. */
export class RequestAuthenticationSpec implements PolicyScope {
  @IsOptional() @ValidateNested() @Type(() => WorkloadSelector) selector?: WorkloadSelector;
  @IsOptional() @ValidateNested() @Type(() => PolicyTargetReference) targetRef?: PolicyTargetReference;
  @IsOptional() @IsArray() @ValidateNested({ each: true }) @Type(() => PolicyTargetReference) targetRefs?: PolicyTargetReference[];
  @IsOptional() @IsArray() @ValidateNested({ each: true }) @Type(() => JwtRule) jwtRules?: JwtRule[];
}

/** An HTTP header name as RFC 9110 defines a token (headers are written out, so this must hold). */
const HEADER_TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

function checkJwtRule(rule: JwtRule, at: string): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const empty = (list: string[] | undefined, field: string, what: string) =>
    (list ?? []).forEach((v, i) => v === '' && issues.push({ field: `${at}.${field}[${i}]`, message: `${what} must not be empty` }));

  // Like the incumbent: the issuer may be omitted only when jwksUri says where the keys are.
  if (!rule.issuer && !rule.jwksUri) issues.push({ field: `${at}.issuer`, message: 'required unless jwksUri is set' });
  empty(rule.audiences, 'audiences', 'an audience');
  empty(rule.fromParams, 'fromParams', 'a query parameter name');
  empty(rule.fromCookies, 'fromCookies', 'a cookie name');
  if (rule.jwksUri !== undefined) {
    const problem = jwksUriProblem(rule.jwksUri);
    if (problem) issues.push({ field: `${at}.jwksUri`, message: problem });
  }
  if (rule.jwks !== undefined) {
    const problem = jwksProblem(rule.jwks);
    if (problem) issues.push({ field: `${at}.jwks`, message: problem });
    // Two key sources would leave it unclear which one verifies tokens.
    if (rule.jwksUri) issues.push({ field: `${at}.jwks`, message: 'cannot be used together with jwksUri' });
  }
  (rule.outputClaimToHeaders ?? []).forEach((o, i) => {
    if (o.header === '') issues.push({ field: `${at}.outputClaimToHeaders[${i}].header`, message: 'must not be empty' });
    else if (!HEADER_TOKEN.test(o.header)) issues.push({ field: `${at}.outputClaimToHeaders[${i}].header`, message: `"${o.header}" is not a valid HTTP header name` });
    if (o.claim === '') issues.push({ field: `${at}.outputClaimToHeaders[${i}].claim`, message: 'must not be empty' });
  });
  if (rule.timeout !== undefined) {
    const problem = timeoutProblem(rule.timeout);
    if (problem) issues.push({ field: `${at}.timeout`, message: problem });
  }
  return issues;
}

function jwksUriProblem(uri: string): string | undefined {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return `"${uri}" is not a URL`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `scheme "${url.protocol.slice(0, -1)}" is not supported; use http or https`;
  if (url.hostname === '') return `"${uri}" has no host`;
  return undefined;
}

function jwksProblem(jwks: string): string | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(jwks);
  } catch (e) {
    return `is not valid JSON: ${(e as Error).message}`;
  }
  const keys = (parsed as { keys?: unknown } | null)?.keys;
  return typeof parsed === 'object' && parsed !== null && Array.isArray(keys) ? undefined : 'must be a JSON key set: an object with a "keys" array';
}

/** The incumbent's rule for durations: at least 1ms, in whole milliseconds. */
function timeoutProblem(text: string): string | undefined {
  let d: Duration;
  try {
    d = Duration.parse(text);
  } catch {
    return `"${text}" is not a duration such as 5s or 500ms`;
  }
  if (d.nanos < 1_000_000n) return 'must be at least 1ms';
  if (d.nanos % 1_000_000n !== 0n) return 'must be whole milliseconds';
  return undefined;
}

export const RequestAuthenticationKind: KindDefinition<RequestAuthenticationSpec> = {
  kind: 'RequestAuthentication',
  group: 'security.mesh.io',
  versions: SECURITY_VERSIONS,
  specClass: RequestAuthenticationSpec,
  check: (r) => [
    ...checkPolicyScope(r.spec),
    // Duplicate issuers are accepted, as the incumbent does (e.g. one issuer read from two headers).
    ...(r.spec.jwtRules ?? []).flatMap((rule, i) => checkJwtRule(rule, `spec.jwtRules[${i}]`)),
  ],
};

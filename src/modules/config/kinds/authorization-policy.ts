import { Type } from 'class-transformer';
import { IsArray, IsIn, IsOptional, IsString, ValidateNested } from 'class-validator';
import { FieldIssue, KindDefinition, SECURITY_VERSIONS } from '../kind';
import { isIPOrCIDR } from './common';
import { checkPolicyScope, PolicyScope, PolicyTargetReference, WorkloadSelector } from './request-authentication';

export const AUTHZ_ACTIONS = ['ALLOW', 'DENY', 'AUDIT', 'CUSTOM'] as const;
export type AuthorizationAction = (typeof AUTHZ_ACTIONS)[number];

const optionalList = () => (target: object, key: string) => {
  IsOptional()(target, key);
  IsArray()(target, key);
  IsString({ each: true })(target, key);
};

/** Who sends the request. Within a field values are ORed; across fields they are ANDed. */
export class Source {
  /** Peer identities from mTLS, e.g. `cluster.local/ns/default/sa/productpage`. */
  @optionalList() principals?: string[];
  @optionalList() notPrincipals?: string[];
  /** `<iss>/<sub>` of the request's JWT. */
  @optionalList() requestPrincipals?: string[];
  @optionalList() notRequestPrincipals?: string[];
  @optionalList() namespaces?: string[];
  @optionalList() notNamespaces?: string[];
  /** `<namespace>/<serviceaccount>`, or a bare name in the policy's namespace; an alternative to principals and namespaces. */
  @optionalList() serviceAccounts?: string[];
  @optionalList() notServiceAccounts?: string[];
  /** Trust domains of the peer identity (as the incumbent's conformance cases use them). */
  @optionalList() trustDomains?: string[];
  @optionalList() notTrustDomains?: string[];
  /** The connection's peer address. */
  @optionalList() ipBlocks?: string[];
  @optionalList() notIpBlocks?: string[];
  /** The original client address (X-Forwarded-For or PROXY protocol). */
  @optionalList() remoteIpBlocks?: string[];
  @optionalList() notRemoteIpBlocks?: string[];
}

/** What the request asks for. */
export class Operation {
  @optionalList() hosts?: string[];
  @optionalList() notHosts?: string[];
  /** Port numbers as strings, e.g. "8080". */
  @optionalList() ports?: string[];
  @optionalList() notPorts?: string[];
  @optionalList() methods?: string[];
  @optionalList() notMethods?: string[];
  /** Exact, `prefix*`, `*suffix`, or templates with whole-segment `{*}` / trailing `{**}`. */
  @optionalList() paths?: string[];
  @optionalList() notPaths?: string[];
}

export class RuleFrom {
  @IsOptional() @ValidateNested() @Type(() => Source) source?: Source;
}

export class RuleTo {
  @IsOptional() @ValidateNested() @Type(() => Operation) operation?: Operation;
}

/** An extra attribute match, e.g. `request.headers[x-token]` in values. */
export class Condition {
  @IsString() key!: string;
  @optionalList() values?: string[];
  @optionalList() notValues?: string[];
}

/** A rule matches when any `from`, any `to` and every `when` match (absent parts match anything). */
export class AuthorizationRule {
  @IsOptional() @IsArray() @ValidateNested({ each: true }) @Type(() => RuleFrom) from?: RuleFrom[];
  @IsOptional() @IsArray() @ValidateNested({ each: true }) @Type(() => RuleTo) to?: RuleTo[];
  @IsOptional() @IsArray() @ValidateNested({ each: true }) @Type(() => Condition) when?: Condition[];
}

/** The external authorizer a CUSTOM policy delegates to, named in the mesh config's extension providers. */
export class ExtensionProvider {
  @IsString() name!: string;
}

/** Access control for the selected workloads: security.mesh.io AuthorizationPolicy. */
export class AuthorizationPolicySpec implements PolicyScope {
  @IsOptional() @ValidateNested() @Type(() => WorkloadSelector) selector?: WorkloadSelector;
  @IsOptional() @ValidateNested() @Type(() => PolicyTargetReference) targetRef?: PolicyTargetReference;
  @IsOptional() @IsArray() @ValidateNested({ each: true }) @Type(() => PolicyTargetReference) targetRefs?: PolicyTargetReference[];
  @IsOptional() @IsArray() @ValidateNested({ each: true }) @Type(() => AuthorizationRule) rules?: AuthorizationRule[];
  /** ALLOW when unset. */
  @IsOptional() @IsIn(AUTHZ_ACTIONS) action?: AuthorizationAction;
  @IsOptional() @ValidateNested() @Type(() => ExtensionProvider) provider?: ExtensionProvider;
}

/** Source fields a CUSTOM (external) authorizer is not given, so matching on them is refused. */
const CUSTOM_UNSUPPORTED_SOURCE: (keyof Source)[] = [
  'principals', 'notPrincipals', 'requestPrincipals', 'notRequestPrincipals',
  'namespaces', 'notNamespaces', 'serviceAccounts', 'notServiceAccounts',
];
const SOURCE_FIELDS: (keyof Source)[] = [...CUSTOM_UNSUPPORTED_SOURCE, 'trustDomains', 'notTrustDomains', 'ipBlocks', 'notIpBlocks', 'remoteIpBlocks', 'notRemoteIpBlocks'];
const OPERATION_FIELDS: (keyof Operation)[] = ['hosts', 'notHosts', 'ports', 'notPorts', 'methods', 'notMethods', 'paths', 'notPaths'];
const NEVER_TRIGGERS = 'without rules never matches; add an empty rule {} to apply it to every request';

function checkAuthorizationPolicy(spec: AuthorizationPolicySpec): FieldIssue[] {
  const issues = checkPolicyScope(spec);
  const action = spec.action ?? 'ALLOW';
  if (action === 'CUSTOM') {
    if (spec.rules === undefined) issues.push({ field: 'spec.action', message: `CUSTOM ${NEVER_TRIGGERS}` });
    if (!spec.provider) issues.push({ field: 'spec.action', message: 'CUSTOM needs provider.name, the external authorizer to ask' });
    else if (spec.provider.name === '') issues.push({ field: 'spec.provider.name', message: 'must not be empty' });
  } else if (spec.provider) {
    issues.push({ field: 'spec.provider', message: `only allowed with action CUSTOM, not ${action}` });
  }
  if (action === 'DENY' && spec.rules === undefined) issues.push({ field: 'spec.action', message: `DENY ${NEVER_TRIGGERS}` });
  (spec.rules ?? []).forEach((rule, i) => issues.push(...checkRule(rule, `spec.rules[${i}]`, action === 'CUSTOM')));
  return issues;
}

function checkRule(rule: AuthorizationRule, at: string, custom: boolean): FieldIssue[] {
  const issues: FieldIssue[] = [];
  // An explicit empty list would match nothing, which is never what was meant.
  if (rule.from?.length === 0) issues.push({ field: `${at}.from`, message: 'must not be empty; leave it out to match any source' });
  if (rule.to?.length === 0) issues.push({ field: `${at}.to`, message: 'must not be empty; leave it out to match any operation' });
  (rule.from ?? []).forEach((f, j) => {
    const src = f.source;
    const here = `${at}.from[${j}]`;
    if (!src) return issues.push({ field: here, message: 'source is required' });
    if (!SOURCE_FIELDS.some((k) => src[k]?.length)) issues.push({ field: `${here}.source`, message: 'must set at least one field' });
    if ((src.serviceAccounts?.length || src.notServiceAccounts?.length) && ['principals', 'notPrincipals', 'namespaces', 'notNamespaces'].some((k) => src[k as keyof Source]?.length)) {
      issues.push({ field: `${here}.source.${src.serviceAccounts?.length ? 'serviceAccounts' : 'notServiceAccounts'}`, message: 'cannot be combined with principals or namespaces' });
    }
    for (const k of SOURCE_FIELDS) {
      const list = src[k] ?? [];
      if (custom && list.length && CUSTOM_UNSUPPORTED_SOURCE.includes(k)) issues.push({ field: `${here}.source.${k}`, message: 'not supported with action CUSTOM' });
      list.forEach((v, n) => {
        const field = `${here}.source.${k}[${n}]`;
        if (v === '') issues.push({ field, message: 'must not be empty' });
        else if (/IpBlocks$/i.test(k) && !isIPOrCIDR(v)) issues.push({ field, message: `"${v}" is not an IP address or CIDR range` });
        else if (/erviceAccounts$/.test(k) && !/^([^/]+\/)?[^/]+$/.test(v)) issues.push({ field, message: `"${v}" must be <namespace>/<serviceaccount> or <serviceaccount>` });
      });
    }
  });
  (rule.to ?? []).forEach((t, j) => {
    const op = t.operation;
    const here = `${at}.to[${j}]`;
    if (!op) return issues.push({ field: here, message: 'operation is required' });
    if (!OPERATION_FIELDS.some((k) => op[k]?.length)) issues.push({ field: `${here}.operation`, message: 'must set at least one field' });
    for (const k of OPERATION_FIELDS) {
      (op[k] ?? []).forEach((v, n) => {
        const field = `${here}.operation.${k}[${n}]`;
        const problem = v === '' ? 'must not be empty' : /orts$/.test(k) ? portProblem(v) : /aths$/.test(k) ? pathTemplateProblem(v) : undefined;
        if (problem) issues.push({ field, message: problem });
      });
    }
  });
  (rule.when ?? []).forEach((c, j) => issues.push(...checkCondition(c, `${at}.when[${j}]`, custom)));
  return issues;
}

function portProblem(v: string): string | undefined {
  return /^\d{1,5}$/.test(v) && Number(v) >= 1 && Number(v) <= 65535 ? undefined : `"${v}" is not a port number from 1 to 65535`;
}

/**
 * `{*}` (one segment) and `{**}` (the rest of the path) must be whole segments, `{**}` only the
 * last one; other braces or `*` inside a templated path would be silently literal, so refuse them.
 */
export function pathTemplateProblem(path: string): string | undefined {
  if (!path.includes('{*}') && !path.includes('{**}')) return undefined;
  const segments = path.split('/');
  for (let i = 0; i < segments.length; i++) {
    const s = segments[i];
    if (s !== '{*}' && s !== '{**}' && /[{}*]/.test(s)) return `segment "${s}": a templated path may use {*} and {**} only as whole segments`;
  }
  return undefined;
}

type ValueCheck = (v: string) => string | undefined;
const ipValue: ValueCheck = (v) => (isIPOrCIDR(v) ? undefined : `"${v}" is not an IP address or CIDR range`);

/** Condition keys and how their values are checked; `[...]` parts name a header, claim or filter field. */
const CONDITION_KEYS: [RegExp, ValueCheck?][] = [
  [/^request\.headers\[[^[\]]+\]$/],
  [/^source\.ip$/, ipValue],
  [/^remote\.ip$/, ipValue],
  [/^source\.namespace$/],
  [/^source\.principal$/],
  [/^source\.serviceAccount$/],
  [/^request\.auth\.(principal|audiences|presenter)$/],
  [/^request\.auth\.claims(\[[^[\]]+\])+$/],
  [/^destination\.ip$/, ipValue],
  [/^destination\.port$/, portProblem],
  [/^connection\.sni$/],
  [/^experimental\.envoy\.filters\.[^[\]]+(\[[^[\]]+\])+$/],
];

/** Keys of older APIs, refused with the replacement named. */
function retiredKey(key: string): string | undefined {
  if (key === 'destination.namespace') return 'destination.namespace is replaced by the policy\'s own namespace';
  if (key.startsWith('destination.labels')) return 'destination.labels is replaced by the policy\'s selector';
  if (key === 'destination.name' || key === 'destination.user') return `${key} is no longer supported`;
  return undefined;
}

function checkCondition(c: Condition, at: string, custom: boolean): FieldIssue[] {
  const issues: FieldIssue[] = [];
  if (c.key === '') return [{ field: `${at}.key`, message: 'must not be empty' }];
  const known = CONDITION_KEYS.find(([re]) => re.test(c.key));
  if (!known) {
    const message = retiredKey(c.key) ??
      (/^(request\.headers|request\.auth\.claims|experimental\.envoy\.filters\.)/.test(c.key)
        ? `"${c.key}" must name its field in brackets, e.g. request.headers[x-user] or request.auth.claims[groups]`
        : `unknown attribute "${c.key}"`);
    return [{ field: `${at}.key`, message }];
  }
  if (custom && /^(source\.(namespace|principal|serviceAccount)|request\.auth\.)/.test(c.key)) {
    issues.push({ field: `${at}.key`, message: `${c.key} is not supported with action CUSTOM` });
  }
  if (!c.values?.length && !c.notValues?.length) issues.push({ field: at, message: `at least one of values or notValues is required for ${c.key}` });
  for (const list of ['values', 'notValues'] as const) {
    (c[list] ?? []).forEach((v, n) => {
      const problem = v === '' ? 'must not be empty' : known[1]?.(v);
      if (problem) issues.push({ field: `${at}.${list}[${n}]`, message: problem });
    });
  }
  return issues;
}

export const AuthorizationPolicyKind: KindDefinition<AuthorizationPolicySpec> = {
  kind: 'AuthorizationPolicy',
  group: 'security.mesh.io',
  versions: SECURITY_VERSIONS,
  specClass: AuthorizationPolicySpec,
  check: (r) => checkAuthorizationPolicy(r.spec),
};

/**
 * What the proxy did with a simulated request, in the policies' own terms: the status, the
 * filter that decided, the rule that matched (`<name>.<namespace>` rule N and its action),
 * every rule considered with the first condition that failed, and dry-run rules apart.
 */
import type { FilterReport, JwtAuthnReport, ProbeResult, RbacEvaluation, RbacReport } from '../proxy';
import { BAD_CUSTOM_SUFFIX, EXT_AUTHZ_PREFIX } from '../security/authz/names';

export type Action = 'ALLOW' | 'DENY' | 'AUDIT' | 'CUSTOM';
export type Decision = 'allowed' | 'denied' | 'unauthenticated' | 'refused' | 'error';

export interface RuleResult {
  /** `<name>.<namespace> rule <n>`. */
  rule: string;
  /** The RBAC policy name in the proxy's config (`ns[foo]-policy[name]-rule[0]`). */
  policyId: string;
  matched: boolean;
  /** The first failing condition, when not matched. */
  reason?: string;
}

export interface EngineResult {
  filter: string;
  action: Action;
  /** The engine's own verdict (an AUDIT engine allows always). */
  allowed: boolean;
  /** The first matching rule, which decides. */
  matched?: string;
  rules: RuleResult[];
}

export interface Authentication {
  /** Envoy's status name (`Ok`, `JwtExpired`...) and message. */
  status: string;
  message: string;
  /** Plain words: `expired`, `wrong issuer`... */
  reason: string;
  /** False for claims the simulator signed itself (`--claims`). */
  verified: boolean;
}

export interface Answer {
  /** The HTTP status the client gets; absent when the connection is closed or refused. */
  status?: number;
  decision: Decision;
  /** The filter (or step) that answered. */
  by?: string;
  reason: string;
  /** The rule that decided, if one did: `{ rule: "deny-admin.foo rule 0", action: "DENY" }`. */
  matched?: { rule: string; action: Action };
  authentication?: Authentication;
  /** Enforced engines, in filter order. */
  rules: EngineResult[];
  /** Dry-run (shadow) engines: reported, never enforced. */
  dryRun: EngineResult[];
  listener?: string;
  chain?: string;
}

const MTLS_ONLY = 'the port takes mutual TLS only (PeerAuthentication STRICT): give --principal, --source-namespace or --from';

const RULE_NAME = /^(?:mesh-ext-authz-.+?-)?ns\[(.*?)\]-policy\[(.*?)\]-rule\[(\d+)\](?:-deny-due-to-bad-CUSTOM-action)?$/;

/** `ns[foo]-policy[deny-admin]-rule[0]` → `deny-admin.foo rule 0`; other names as they are. */
export function ruleName(policyId: string): string {
  const m = RULE_NAME.exec(policyId);
  return m ? `${m[2]}.${m[1]} rule ${m[3]}` : policyId;
}

function actionOf(evaluation: RbacEvaluation): Action {
  if (evaluation.action === 'LOG') return 'AUDIT';
  const names = evaluation.policies.map((p) => p.name);
  if (names.some((n) => n.startsWith(EXT_AUTHZ_PREFIX) || n.endsWith(BAD_CUSTOM_SUFFIX))) return 'CUSTOM';
  return evaluation.action;
}

function engine(filter: string, e: RbacEvaluation): EngineResult {
  return {
    filter,
    action: actionOf(e),
    allowed: e.allowed,
    matched: e.policyId !== undefined ? ruleName(e.policyId) : undefined,
    rules: e.policies.map((p) => ({ rule: ruleName(p.name), policyId: p.name, matched: p.matched, ...(p.reason !== undefined ? { reason: p.reason } : {}) })),
  };
}

const JWT_REASONS: Record<string, string> = {
  Ok: 'valid',
  JwtMissed: 'no token',
  JwtExpired: 'expired',
  JwtNotYetValid: 'not yet valid (nbf)',
  JwtUnknownIssuer: 'wrong issuer: no jwtRule of the workload trusts it',
  JwksKidAlgMismatch: "unknown key: the issuer's key set has no key for the token's kid and alg",
  JwksNoValidKeys: "unknown key: the issuer's key set has no usable key",
  JwtVerificationFail: 'bad signature (or a subject the rule does not accept)',
  JwtAudienceNotAllowed: 'audience not allowed',
  JwksFetchFail: "the issuer's key set could not be fetched",
};

function authentication(report: JwtAuthnReport, verified: boolean): Authentication | undefined {
  const status = report.status;
  if (!status) return undefined;
  const reason = JWT_REASONS[status.name] ?? (status.name.startsWith('Jwt') ? `malformed token: ${status.message}` : status.message);
  return { status: status.name, message: status.message, reason, verified };
}

/** The answer from the probe's result; `token.verified` false when the token was signed by the simulator. */
export function answerOf(result: ProbeResult, token: { given: boolean; verified: boolean }, plainText: boolean): Answer {
  const rules: EngineResult[] = [];
  const dryRun: EngineResult[] = [];
  let auth: Authentication | undefined;
  for (const report of result.trace as FilterReport[]) {
    // Without a token, an Ok only says none was required: nothing to report.
    if (report.type === 'jwt_authn' && (token.given || (report as JwtAuthnReport).status?.name !== 'Ok')) auth = authentication(report as JwtAuthnReport, token.verified) ?? auth;
    if (report.type === 'rbac') {
      const r = report as RbacReport;
      if (r.enforced) rules.push(engine(r.filter, r.enforced));
      // CUSTOM rules are shadow rules that pick the requests the external authorizer checks: enforced, not dry-run.
      if (r.shadow && r.shadow.policies.some((p) => p.name.startsWith(EXT_AUTHZ_PREFIX))) rules.push(engine(r.filter, r.shadow));
      else if (r.shadow && r.shadow.policies.length > 0) dryRun.push(engine(r.filter, r.shadow));
    }
  }
  const base = { authentication: auth, rules, dryRun, listener: result.listener, chain: result.chain };
  const verdict = result.verdict;
  switch (verdict.kind) {
    case 'no-listener':
      return { ...base, decision: 'refused', reason: 'no inbound listener of the workload takes this port' };
    case 'no-chain':
      return {
        ...base, decision: 'refused', by: 'filter chain selection',
        reason: plainText ? `connection refused: ${MTLS_ONLY}` : 'connection refused: no filter chain of the listener takes this connection',
      };
    case 'handshake':
      return { ...base, decision: 'refused', by: 'TLS handshake', reason: `connection refused: ${verdict.why} (mutual TLS: give --principal, --source-namespace or --from)` };
    case 'closed': {
      const denying = rules.find((e) => !e.allowed);
      return { ...base, decision: 'denied', by: verdict.by, reason: `connection closed by ${verdict.by}: ${denial(denying)}`, matched: decisive(denying) };
    }
    case 'tcp':
    case 'route': {
      const allow = [...rules].reverse().find((e) => e.action === 'ALLOW');
      const why = allow ? `ALLOW rule ${allow.matched} matched` : 'no ALLOW policy selects the workload, and no DENY rule matched';
      return { ...base, status: verdict.kind === 'route' ? 200 : undefined, decision: 'allowed', reason: `forwarded to the application${verdict.kind === 'tcp' ? ' (TCP)' : ''}: ${why}`, matched: allow ? decisive(allow) : undefined };
    }
    default: {
      if (verdict.status === 401) return { ...base, status: 401, decision: 'unauthenticated', by: verdict.by, reason: `token rejected: ${auth?.reason ?? verdict.body}` };
      if (verdict.status === 403) {
        const denying = rules.find((e) => !e.allowed);
        return { ...base, status: 403, decision: 'denied', by: verdict.by, reason: denial(denying), matched: decisive(denying) };
      }
      const custom = rules.find((e) => e.action === 'CUSTOM' && e.matched && e.rules.some((r) => r.policyId.startsWith(EXT_AUTHZ_PREFIX)));
      if (custom && verdict.by.includes('ext_authz')) {
        return {
          ...base, status: verdict.status, decision: 'error', by: verdict.by, matched: { rule: custom.matched!, action: 'CUSTOM' },
          reason: `CUSTOM rule ${custom.matched} matched: the extension provider's authorizer decides, and the simulator does not call it`,
        };
      }
      return { ...base, status: verdict.status, decision: 'error', by: verdict.by, reason: `answered ${verdict.status} by ${verdict.by}${verdict.body ? `: ${verdict.body}` : ''}` };
    }
  }
}

function denial(e: EngineResult | undefined): string {
  if (!e) return 'denied';
  if (e.action === 'ALLOW') return 'no ALLOW rule matched';
  return `${e.action} rule ${e.matched} matched`;
}

/** The rule that decided: the matching DENY (or CUSTOM) rule, the matching ALLOW rule; none when no ALLOW rule matched. */
function decisive(e: EngineResult | undefined): Answer['matched'] {
  return e?.matched !== undefined ? { rule: e.matched, action: e.action } : undefined;
}

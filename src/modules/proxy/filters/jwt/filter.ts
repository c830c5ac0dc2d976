import { CONTINUE, FilterContext, FilterOutcome, FilterReport, HttpFilter, HttpFilterFactory, ProxyHttpRequest } from '../../http/filter-api';
import { compileRouteMatch, RequestPredicate } from '../matchers/route-match';
import { asBool, asList, asObject, fail, has, isObject, requiredString } from '../shared/config';
import type { VerifyContext } from './authenticator';
import { JwtProvider, parseProvider } from './provider';
import { compileRequirement, Verifier } from './requirement';
import { JwtStatus, Status } from './status';
import { JWT_AUTHN_FILTER, JWT_AUTHN_TYPE } from '../../../envoy/well-known';

export const JWT_AUTHN_TYPE_URL = JWT_AUTHN_TYPE;
/** Where verified payloads go (Envoy's dynamic metadata namespace of the filter). */
export const JWT_AUTHN_METADATA = JWT_AUTHN_FILTER;

/** Envoy caps the path in the `www-authenticate` realm. */
const MAX_REALM_PATH = 256;

/** The filter's report on a traced request: the verification outcome (Ok, or why the token was refused). */
export interface JwtAuthnReport extends FilterReport {
  readonly type: 'jwt_authn';
  /** Absent when no rule of the filter applies to the request (nothing is checked). */
  readonly status?: JwtStatus;
}

interface Rule {
  readonly matches: RequestPredicate;
  readonly verifier: Verifier;
}

/**
 * Envoy's jwt_authn: the first rule whose route match fits the request names the requirement;
 * no rule, no check. A failure answers 401 with the reason as
 * body and a `www-authenticate` challenge.
 */
export class JwtAuthnFilter implements HttpFilter {
  constructor(
    readonly name: string,
    private readonly providers: readonly JwtProvider[],
    private readonly rules: readonly Rule[],
    private readonly options: { readonly bypassCorsPreflight: boolean; readonly stripFailureResponse: boolean },
    private readonly context: FilterContext,
  ) {}

  async onRequest(request: ProxyHttpRequest): Promise<FilterOutcome> {
    if (this.options.bypassCorsPreflight && isCorsPreflight(request)) return this.traced(request);
    const rule = this.rules.find((r) => r.matches(request));
    if (!rule) return this.traced(request);
    // Taken before verification, which may remove the token header.
    const realm = originalUri(request);
    const verification: VerifyContext = { request, nowSeconds: Math.floor(this.context.now() / 1000), extracted: {} };
    const status = await rule.verifier.verify(verification);
    if (Object.keys(verification.extracted).length > 0) {
      const existing = request.metadata[JWT_AUTHN_METADATA];
      // `extracted` is this request's own object: no copy unless another filter wrote there first.
      request.metadata[JWT_AUTHN_METADATA] = existing ? Object.assign({}, existing, verification.extracted) : verification.extracted;
    }
    this.traced(request, status);
    if (status === Status.Ok) return CONTINUE;
    this.context.log('debug', `${this.name}: ${request.method} ${request.path} rejected: ${status.message}`);
    return rejection(status, realm, this.options.stripFailureResponse);
  }

  private traced(request: ProxyHttpRequest, status?: JwtStatus): FilterOutcome {
    if (request.trace) {
      const report: JwtAuthnReport = { filter: this.name, type: 'jwt_authn', status };
      request.trace.push(report);
    }
    return CONTINUE;
  }

  close(): void {
    for (const provider of this.providers) provider.jwks.close();
  }
}

/**
 * The local reply; `strip_failure_response` leaves only the status code. Every failure is 401,
 * a disallowed audience included: Envoy answers that one with 403, but our contract (the
 * JWT issue's acceptance list) makes every invalid token a 401, so a client can tell "your
 * token is no good" (401) from "your token is fine but not allowed here" (RBAC's 403).
 */
function rejection(status: JwtStatus, realm: string, strip: boolean): FilterOutcome {
  const code = 401;
  if (strip) return { kind: 'respond', status: code, body: '' };
  const challenge = `Bearer realm="${realm}"${status === Status.JwtMissed ? '' : ', error="invalid_token"'}`;
  return { kind: 'respond', status: code, body: status.message, headers: { 'www-authenticate': challenge, 'content-type': 'text/plain' } };
}

/** Envoy's `buildOriginalUri`: scheme, host and the (capped) path with query. */
function originalUri(request: ProxyHttpRequest): string {
  const scheme = request.headers[':scheme'] ?? 'http';
  const host = request.headers[':authority'] ?? request.headers.host ?? '';
  return `${scheme}://${host}${request.path.slice(0, MAX_REALM_PATH)}`;
}

function isCorsPreflight(request: ProxyHttpRequest): boolean {
  return request.method === 'OPTIONS' && !!request.headers.origin && !!request.headers['access-control-request-method'];
}

function createJwtAuthnFilter(name: string, value: Record<string, unknown>, context: FilterContext): JwtAuthnFilter {
  const config = asObject(value, name);
  if (has(config, 'filter_state_rules')) fail(`${name}.filter_state_rules`, 'is not supported by the built-in proxy (no filter state reaches its filters)');
  const providers = new Map<string, JwtProvider>();
  try {
    for (const [providerName, provider] of Object.entries(isObject(config.providers) ? config.providers : {})) {
      providers.set(providerName, parseProvider(providerName, provider, `${name}.providers[${JSON.stringify(providerName)}]`, context, name));
    }
    const requirementMap = isObject(config.requirement_map) ? config.requirement_map : {};
    const named = new Map<string, Verifier>();
    for (const [requirementName, requirement] of Object.entries(requirementMap)) {
      named.set(requirementName, compileRequirement(requirement, `${name}.requirement_map[${JSON.stringify(requirementName)}]`, providers));
    }
    const rules = asList(config.rules, `${name}.rules`).map((r, i): Rule => {
      const at = `${name}.rules[${i}]`;
      const rule = asObject(r, at);
      const matches = compileRouteMatch(rule.match, `${at}.match`);
      if (has(rule, 'requirement_name')) {
        const requirementName = requiredString(rule.requirement_name, `${at}.requirement_name`);
        const verifier = named.get(requirementName) ?? fail(`${at}.requirement_name`, `${JSON.stringify(requirementName)} is not in requirement_map`);
        return { matches, verifier };
      }
      return { matches, verifier: compileRequirement(rule.requires ?? {}, `${at}.requires`, providers) };
    });
    return new JwtAuthnFilter(
      name,
      [...providers.values()],
      rules,
      {
        bypassCorsPreflight: asBool(config.bypass_cors_preflight, `${name}.bypass_cors_preflight`),
        stripFailureResponse: asBool(config.strip_failure_response, `${name}.strip_failure_response`),
      },
      context,
    );
  } catch (err) {
    // Remote key sources may already be fetching (async_fetch): stop them with the rejected config.
    for (const provider of providers.values()) provider.jwks.close();
    throw err;
  }
}

export const jwtAuthnFilterFactory: HttpFilterFactory = {
  typeUrl: JWT_AUTHN_TYPE_URL,
  create: createJwtAuthnFilter,
};

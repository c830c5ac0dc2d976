/**
 * RequestAuthentication rules as Envoy's `envoy.filters.http.jwt_authn` (the incumbent's
 * translation): one provider `origins-<n>` per rule, rules ordered by issuer, and a requirement
 * under which a request without a token passes while a token that is present must be valid
 * for some provider (else 401).
 */
import { JwtRule } from '../../config/kinds/request-authentication';
import { EnvoyFilter } from '../../model/generator';
import { JwksSource } from './key-source';
import { JWT_AUTHN_FILTER, JWT_AUTHN_TYPE } from '../../envoy/well-known';
export { JWT_AUTHN_FILTER, JWT_AUTHN_TYPE } from '../../envoy/well-known';

/** Key of the verified payload in the filter's dynamic metadata, where RBAC reads claims. */
export const JWT_PAYLOAD_METADATA_KEY = 'payload';
/** Claims whose space-separated string value becomes a list in the metadata (the incumbent's defaults). */
export const SPACE_DELIMITED_CLAIMS = ['permission', 'scope'];
/** How long a proxy keeps a key set it fetched itself (the incumbent's value). */
const REMOTE_JWKS_CACHE_SECONDS = 5 * 60;
/** Where Envoy looks for a token when a provider names no location. */
export const DEFAULT_TOKEN_HEADER = { name: 'Authorization', value_prefix: 'Bearer ' };
export const DEFAULT_TOKEN_PARAM = 'access_token';

type Obj = Record<string, unknown>;

/** A rule and where its keys come from; `keySet` is the JWKS to inline for `daemon` sources. */
export interface ResolvedRule {
  rule: JwtRule;
  source: JwksSource;
  keySet?: string;
}

/** The provider name of the `index`th rule, as the incumbent names it. */
export function providerName(index: number): string {
  return `origins-${index}`;
}

/** The filter for the rules (already in provider order), or undefined when there are none. */
export function jwtAuthnFilter(rules: readonly ResolvedRule[]): EnvoyFilter | undefined {
  if (rules.length === 0) return undefined;
  const providers: Record<string, Obj> = {};
  rules.forEach((r, i) => (providers[providerName(i)] = provider(r)));
  return {
    name: JWT_AUTHN_FILTER,
    typed_config: {
      '@type': JWT_AUTHN_TYPE,
      providers,
      rules: [{ match: { prefix: '/' }, requires: requirement(rules.length) }],
      bypass_cors_preflight: true,
    },
  };
}

/**
 * One provider: `{provider or allow_missing}`. Several: any single provider, or all of them in
 * the form `{provider or allow_missing}`. The AND makes every token present be valid for its
 * provider; the single providers let a request through when two providers read the same
 * location (a token valid for one fails the other, so the AND alone would reject it).
 */
function requirement(count: number): Obj {
  const byName = (i: number): Obj => ({ provider_name: providerName(i) });
  const optional = (i: number): Obj => ({ requires_any: { requirements: [byName(i), { allow_missing: {} }] } });
  if (count === 1) return optional(0);
  const each = Array.from({ length: count }, (_, i) => i);
  return { requires_any: { requirements: [...each.map(byName), { requires_all: { requirements: each.map(optional) } }] } };
}

function provider({ rule, source, keySet }: ResolvedRule): Obj {
  const p: Obj = {
    issuer: rule.issuer ?? '',
    payload_in_metadata: JWT_PAYLOAD_METADATA_KEY,
    normalize_payload_in_metadata: { space_delimited_claims: SPACE_DELIMITED_CLAIMS },
  };
  if (rule.audiences?.length) p.audiences = rule.audiences;
  if (rule.forwardOriginalToken) p.forward = true;
  if (rule.outputPayloadToHeader) p.forward_payload_header = rule.outputPayloadToHeader;
  if (rule.fromHeaders?.length || rule.fromParams?.length || rule.fromCookies?.length) {
    if (rule.fromHeaders?.length) p.from_headers = rule.fromHeaders.map((h) => (h.prefix ? { name: h.name, value_prefix: h.prefix } : { name: h.name }));
    if (rule.fromParams?.length) p.from_params = rule.fromParams;
    if (rule.fromCookies?.length) p.from_cookies = rule.fromCookies;
  } else {
    // Envoy's default locations, written out (the incumbent leaves them implicit) so every
    // consumer, the built-in proxy included, reads tokens from the same places.
    p.from_headers = [{ ...DEFAULT_TOKEN_HEADER }];
    p.from_params = [DEFAULT_TOKEN_PARAM];
  }
  if (rule.outputClaimToHeaders?.length) p.claim_to_headers = rule.outputClaimToHeaders.map((c) => ({ header_name: c.header, claim_name: c.claim }));
  switch (source.kind) {
    case 'inline':
      p.local_jwks = { inline_string: source.jwks };
      break;
    case 'daemon':
      if (keySet === undefined) throw new Error(`no key set resolved for ${source.location.jwksUri ?? source.location.issuer}`);
      p.local_jwks = { inline_string: keySet };
      break;
    case 'remote': {
      const seconds = Number(source.timeout.nanos / 1_000_000_000n);
      const nanos = Number(source.timeout.nanos % 1_000_000_000n);
      const timeout = nanos ? { seconds, nanos } : { seconds };
      p.remote_jwks = {
        http_uri: { uri: source.uri, cluster: source.cluster, timeout },
        cache_duration: { seconds: REMOTE_JWKS_CACHE_SECONDS },
      };
      break;
    }
  }
  return p;
}

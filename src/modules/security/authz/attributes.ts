/**
 * How each policy attribute (a Source/Operation field or a `when` key) becomes RBAC matchers:
 * which side of a policy it belongs to (permission = what is asked, principal = who asks),
 * whether it exists only in HTTP requests, and the matcher for its values.
 */
import { quoteRe2 } from '../../shared/re2';
import {
  ANY_VALUE,
  cidrRange,
  exactMatcher,
  headerMatcher,
  hostMatcher,
  isPathTemplate,
  metadataMatcher,
  orValueMatcher,
  pathTemplateMatcher,
  portNumber,
  prefixMatcher,
  regexMatcher,
  stringMatcher,
  stringMatcherWithPrefix,
  stringOrListMetadataMatcher,
  stringOrValueMatcher,
  suffixMatcher,
} from './matchers';
import { Permission, Principal, PRINCIPAL, StringMatcher, ValueMatcher } from './rbac-types';
import { JWT_AUTHN_FILTER } from '../../envoy/well-known';

/** The filter whose dynamic metadata carries a verified JWT's claims (under `payload`). */
export { JWT_AUTHN_FILTER };
const JWT_PAYLOAD = 'payload';
const SPIFFE_PREFIX = 'spiffe://';

/**
 * Builds the matchers of one attribute. `each` gives one matcher per value (the caller ORs
 * them); `all` gives one matcher for the whole list. Either throws on a value it cannot use.
 */
export type AttributeGenerator<M> = {
  /** Methods, paths, headers, JWT fields...: nothing to check on a TCP (non-HTTP) chain. */
  readonly httpOnly: boolean;
} & ({ readonly each: (value: string) => M; readonly all?: undefined } | { readonly all: (values: readonly string[]) => M; readonly each?: undefined });

const each = <M>(build: (value: string) => M, httpOnly = false): AttributeGenerator<M> => ({ httpOnly, each: build });
const all = <M>(build: (values: readonly string[]) => M, httpOnly = false): AttributeGenerator<M> => ({ httpOnly, all: build });

const authenticated = (principal_name: StringMatcher): Principal => ({ authenticated: { principal_name } });

// ---- permission side (the request's target) ----

export const hostAttribute = each<Permission>((v) => ({ header: hostMatcher(v) }), true);
export const methodAttribute = each<Permission>((v) => ({ header: headerMatcher(':method', v) }), true);
export const pathAttribute = each<Permission>(
  (v) => (isPathTemplate(v) ? { uri_template: pathTemplateMatcher(v) } : { url_path: { path: stringMatcher(v) } }),
  true,
);
export const destinationPortAttribute = each<Permission>((v) => ({ destination_port: portNumber(v) }));
export const destinationIpAttribute = each<Permission>((v) => ({ destination_ip: cidrRange(v) }));
export const sniAttribute = each<Permission>((v) => ({ requested_server_name: stringMatcher(v) }));

/**
 * `experimental.envoy.filters.<filter>[<key>]...`: the dynamic metadata of another filter.
 * A value `[v]` matches a list containing `v`; any other value the string itself.
 */
export function envoyFilterAttribute(key: string): AttributeGenerator<Permission> {
  const rest = key.slice('experimental.'.length);
  const open = rest.indexOf('[');
  if (open <= 0) throw new Error(`invalid key ${key}: expected experimental.envoy.filters.<filter>[<field>]`);
  const filter = rest.slice(0, open);
  const path = bracketedNames(rest.slice(open), key);
  return all((values) => {
    const matchers: ValueMatcher[] = values.map((v) =>
      v.startsWith('[') && v.endsWith(']') ? { list_match: { one_of: { string_match: stringMatcher(v.slice(1, -1)) } } } : { string_match: stringMatcher(v) },
    );
    return { metadata: metadataMatcher(filter, path, orValueMatcher(matchers)) };
  });
}

// ---- principal side (who sends the request) ----

export const sourceIpAttribute = each<Principal>((v) => ({ direct_remote_ip: cidrRange(v) }));
export const remoteIpAttribute = each<Principal>((v) => ({ remote_ip: cidrRange(v) }));

/** Peer identities `<td>/ns/<ns>/sa/<sa>`, matched as the SPIFFE URI of the peer certificate. */
export const principalAttribute = each<Principal>((v) => authenticated(stringMatcherWithPrefix(v, SPIFFE_PREFIX)));

/** The namespace part of the peer identity; `*` in a value matches any characters. */
export const namespaceAttribute = each<Principal>((v) => authenticated(regexMatcher(`.*/ns/${globRegex(v, '.*')}/.*`)));

/**
 * `<ns>/<sa>` or a bare `<sa>` of the policy's namespace. Extra path segments may follow the
 * namespace or the service account, never glue onto its name (`sa/foo` is not `sa/foo-bar`).
 */
export function serviceAccountAttribute(policyNamespace: string): AttributeGenerator<Principal> {
  return each((v) => {
    const slash = v.indexOf('/');
    const [ns, sa] = slash < 0 ? [policyNamespace, v] : [v.slice(0, slash), v.slice(slash + 1)];
    return authenticated(regexMatcher(`spiffe://.+/ns/${quoteRe2(ns)}/(.+/|)sa/${quoteRe2(sa)}(/.+)?`));
  });
}

/** The trust domain of the peer identity; `*` in a value matches within the domain only. */
export const trustDomainAttribute = each<Principal>((v) =>
  authenticated(v.includes('*') ? regexMatcher(`${SPIFFE_PREFIX}${globRegex(v, '[^/]*')}/.*`) : prefixMatcher(`${SPIFFE_PREFIX}${v}/`)),
);

/**
 * `<iss>/<sub>` of the request's JWT (the issuer may itself contain `/`, so the last one
 * splits), as the verified claims the jwt_authn filter leaves in its metadata. A leading `*`
 * applies to the issuer when a subject is given, else to the subject; a trailing `*` to the
 * subject when given, else to the issuer.
 */
export const requestPrincipalAttribute = all<Principal>((values) => {
  const alternatives = values.map((value) => {
    const slash = value.lastIndexOf('/');
    const found = slash >= 0;
    const iss = found ? value.slice(0, slash) : value;
    const sub = found ? value.slice(slash + 1) : '';
    let matchIss: StringMatcher;
    let matchSub: StringMatcher;
    if (value === '*') {
      [matchIss, matchSub] = [ANY_VALUE, ANY_VALUE];
    } else if (value.startsWith('*')) {
      [matchIss, matchSub] = found ? [iss === '*' ? ANY_VALUE : suffixMatcher(iss.slice(1)), exactMatcher(sub)] : [ANY_VALUE, suffixMatcher(value.slice(1))];
    } else if (value.endsWith('*')) {
      [matchIss, matchSub] = found ? [exactMatcher(iss), sub === '*' ? ANY_VALUE : prefixMatcher(sub.slice(0, -1))] : [prefixMatcher(value.slice(0, -1)), ANY_VALUE];
    } else {
      [matchIss, matchSub] = [exactMatcher(iss), exactMatcher(sub)];
    }
    return PRINCIPAL.and([jwtClaim('iss', matchIss), jwtClaim('sub', matchSub)]);
  });
  return alternatives.length === 1 ? alternatives[0] : PRINCIPAL.or(alternatives);
}, true);

export const audiencesAttribute = all<Principal>((values) => jwtClaims(['aud'], values), true);
export const presenterAttribute = all<Principal>((values) => jwtClaims(['azp'], values), true);

/** `request.auth.claims[a][b]`: the claim `b` nested in `a`, a string or a list of strings. */
export function claimAttribute(key: string): AttributeGenerator<Principal> {
  const path = bracketedNames(key.slice('request.auth.claims'.length), key);
  return all((values) => jwtClaims(path, values), true);
}

/** `request.headers[<name>]`. */
export function headerAttribute(key: string): AttributeGenerator<Principal> {
  const [name, ...more] = bracketedNames(key.slice('request.headers'.length), key);
  if (more.length > 0) throw new Error(`invalid key ${key}: one header name in brackets expected`);
  return each((v) => ({ header: headerMatcher(name, v) }), true);
}

function jwtClaim(claim: string, value: StringMatcher): Principal {
  return { metadata: metadataMatcher(JWT_AUTHN_FILTER, [JWT_PAYLOAD, claim], { string_match: value }) };
}

function jwtClaims(path: readonly string[], values: readonly string[]): Principal {
  return { metadata: stringOrListMetadataMatcher(JWT_AUTHN_FILTER, [JWT_PAYLOAD, ...path], stringOrValueMatcher(values)) };
}

// ---- `when` conditions ----

export type Sided = { side: 'permission'; generator: AttributeGenerator<Permission> } | { side: 'principal'; generator: AttributeGenerator<Principal> };

const permission = (generator: AttributeGenerator<Permission>): Sided => ({ side: 'permission', generator });
const principal = (generator: AttributeGenerator<Principal>): Sided => ({ side: 'principal', generator });

/** The side and generator of a `when` key; an unknown key is an error (the rule cannot be built). */
export function conditionAttribute(key: string, policyNamespace: string): Sided {
  switch (key) {
    case 'destination.ip': return permission(destinationIpAttribute);
    case 'destination.port': return permission(destinationPortAttribute);
    case 'connection.sni': return permission(sniAttribute);
    case 'source.ip': return principal(sourceIpAttribute);
    case 'remote.ip': return principal(remoteIpAttribute);
    case 'source.namespace': return principal(namespaceAttribute);
    case 'source.serviceAccount': return principal(serviceAccountAttribute(policyNamespace));
    case 'source.principal': return principal(principalAttribute);
    case 'request.auth.principal': return principal(requestPrincipalAttribute);
    case 'request.auth.audiences': return principal(audiencesAttribute);
    case 'request.auth.presenter': return principal(presenterAttribute);
  }
  if (key.startsWith('experimental.envoy.filters.')) return permission(envoyFilterAttribute(key));
  if (key.startsWith('request.headers')) return principal(headerAttribute(key));
  if (key.startsWith('request.auth.claims')) return principal(claimAttribute(key));
  throw new Error(`unknown attribute ${key}`);
}

/** `[a][b]` → ['a', 'b']. */
function bracketedNames(s: string, key: string): string[] {
  const names: string[] = [];
  const re = /\[([^[\]]+)\]/y;
  let at = 0;
  while (at < s.length) {
    re.lastIndex = at;
    const m = re.exec(s);
    if (!m) break;
    names.push(m[1]);
    at = re.lastIndex;
  }
  if (names.length === 0 || at !== s.length) throw new Error(`invalid key ${key}: expected names in brackets, e.g. [name]`);
  return names;
}

/** Literal parts escaped, each `*` replaced by `star`. */
function globRegex(value: string, star: string): string {
  return value.split('*').map(quoteRe2).join(star);
}

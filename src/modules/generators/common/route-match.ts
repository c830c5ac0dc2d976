/** VirtualService match conditions: whether they apply here, and as Envoy RouteMatch and matchers. */
import { HTTPMatchRequest, StringMatch } from '../../config/kinds/virtual-service';
import { Proxy } from '../../model/proxy';
import { labelsMatch, ServicePort } from '../../registry/model';

type Obj = Record<string, unknown>;

/** A match without conditions: it catches everything, so later rules are unreachable. */
export function isCatchAll(m: HTTPMatchRequest | undefined): boolean {
  if (!m) return true;
  const uriAll = !m.uri || m.uri.prefix === '/';
  return uriAll && !m.scheme && !m.method && !m.authority && !m.headers && !m.withoutHeaders && !m.queryParams;
}

/** Match conditions on the source or the port that decide whether a match is used at all here. */
export function matchApplies(m: HTTPMatchRequest, proxy: Proxy, port: ServicePort): boolean {
  if (m.port !== undefined && m.port !== port.number) return false;
  if (m.sourceLabels && !labelsMatch(m.sourceLabels, proxy.labels)) return false;
  if (m.sourceNamespace && m.sourceNamespace !== proxy.namespace) return false;
  if (m.gateways && m.gateways.length > 0 && !m.gateways.includes('mesh')) return false;
  return true;
}

export function stringMatcher(m: StringMatch): Obj | undefined {
  if (m.exact !== undefined) return { exact: m.exact };
  if (m.prefix !== undefined && m.prefix !== '') return { prefix: m.prefix };
  if (m.regex !== undefined) return { safe_regex: { regex: m.regex } };
  return undefined;
}

function headerMatcher(name: string, m: StringMatch, invert = false): Obj {
  const sm = stringMatcher(m);
  // An empty prefix (or an empty match) only asks for the header to be present.
  const out: Obj = sm ? { name, string_match: sm } : { name, present_match: true };
  if (invert) out.invert_match = true;
  return out;
}

/** A VirtualService match as an Envoy RouteMatch. */
export function translateMatch(m: HTTPMatchRequest | undefined): Obj {
  const match: Obj = {};
  const uri = m?.uri;
  if (uri?.exact !== undefined) match.path = uri.exact;
  else if (uri?.regex !== undefined) match.safe_regex = { regex: uri.regex };
  else match.prefix = uri?.prefix || '/';
  if (m?.ignoreUriCase) match.case_sensitive = { value: false };
  const headers: Obj[] = [];
  for (const [name, sm] of Object.entries(m?.headers ?? {})) headers.push(headerMatcher(name.toLowerCase(), sm));
  for (const [name, sm] of Object.entries(m?.withoutHeaders ?? {})) headers.push(headerMatcher(name.toLowerCase(), sm, true));
  if (m?.method) headers.push(headerMatcher(':method', m.method));
  if (m?.authority) headers.push(headerMatcher(':authority', m.authority));
  if (m?.scheme) headers.push(headerMatcher(':scheme', m.scheme));
  if (headers.length) match.headers = headers;
  const query: Obj[] = [];
  for (const [name, sm] of Object.entries(m?.queryParams ?? {})) {
    const s = stringMatcher(sm);
    query.push(s && !(sm.exact === '') ? { name, string_match: s } : { name, present_match: true });
  }
  if (query.length) match.query_parameters = query;
  return match;
}

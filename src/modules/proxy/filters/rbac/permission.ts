import { asList, asNumber, asObject, fail, oneofMember } from '../shared/config';
import { compileCidrRange } from '../matchers/cidr';
import { compileHeaderMatcher } from '../matchers/header-matcher';
import { compileMetadataMatcher } from '../matchers/metadata-matcher';
import { compilePathMatcher, compileUriTemplateMatcher } from '../matchers/path-matcher';
import { compileStringMatcher } from '../matchers/string-matcher';
import { allOf, always, anyOf, compact, leaf, metadataLabel, metadataObserved, not, quoted, SubjectPredicate } from './explain';

export type { SubjectPredicate } from './explain';

const RULES = [
  'and_rules', 'or_rules', 'any', 'header', 'url_path', 'destination_ip', 'destination_port',
  'destination_port_range', 'metadata', 'not_rule', 'requested_server_name', 'uri_template', 'matcher',
] as const;

/** envoy.config.rbac.v3.Permission → predicate over what the request or connection targets. */
export function compilePermission(value: unknown, field: string): SubjectPredicate {
  const permission = asObject(value, field);
  const kind = oneofMember(permission, RULES, field);
  const at = `${field}.${kind}`;
  switch (kind) {
    case 'and_rules':
    case 'or_rules': {
      const rules = asList(asObject(permission[kind], at).rules, `${at}.rules`).map((p, i) => compilePermission(p, `${at}.rules[${i}]`));
      return kind === 'and_rules' ? allOf(rules) : anyOf(rules);
    }
    case 'any':
      return always('any');
    case 'not_rule':
      return not(compilePermission(permission.not_rule, at));
    case 'header': {
      const test = compileHeaderMatcher(permission.header, at);
      const name = String((permission.header as { name?: string }).name ?? '').toLowerCase();
      return leaf(`header ${compact(permission.header)}`, (s) => test(s.headers), (s) => quoted(s.headers?.[name]));
    }
    case 'url_path': {
      const test = compilePathMatcher(permission.url_path, at);
      return leaf(`url_path ${compact(permission.url_path)}`, (s) => test(s.path), (s) => `path ${quoted(s.path)}`);
    }
    case 'uri_template':
    case 'matcher': {
      // `matcher` is honoured only when it carries a URI template, the one extension the mesh generates.
      const test = compileUriTemplateMatcher(permission[kind], at);
      const template = (permission[kind] as { typed_config?: { path_template?: string } }).typed_config?.path_template;
      return leaf(`uri_template ${quoted(template)}`, (s) => test(s.path), (s) => `path ${quoted(s.path)}`);
    }
    case 'destination_ip': {
      const test = compileCidrRange(permission.destination_ip, at);
      return leaf(`destination_ip ${compact(permission.destination_ip)}`, (s) => test(s.connection.localAddress), (s) => s.connection.localAddress);
    }
    case 'destination_port': {
      const port = asNumber(permission.destination_port, at);
      return leaf(`destination_port ${port}`, (s) => s.connection.localPort === port, (s) => `port ${s.connection.localPort}`);
    }
    case 'destination_port_range': {
      const range = asObject(permission.destination_port_range, at);
      const start = asNumber(range.start, `${at}.start`);
      const end = asNumber(range.end, `${at}.end`);
      if (end < start) fail(at, `end ${end} is before start ${start}`);
      return leaf(`destination_port_range [${start}, ${end})`, (s) => s.connection.localPort >= start && s.connection.localPort < end, (s) => `port ${s.connection.localPort}`);
    }
    case 'metadata': {
      const test = compileMetadataMatcher(permission.metadata, at);
      const value = (permission.metadata as { value?: unknown }).value;
      return leaf(`${metadataLabel(permission.metadata)} ${compact(value)}`, (s) => test(s.metadata), metadataObserved(permission.metadata));
    }
    default: {
      // No SNI is the empty server name, as Envoy's `requestedServerName()`.
      const test = compileStringMatcher(permission.requested_server_name, at);
      return leaf(`requested_server_name ${compact(permission.requested_server_name)}`, (s) => test(s.connection.sni ?? ''), (s) => quoted(s.connection.sni ?? ''));
    }
  }
}

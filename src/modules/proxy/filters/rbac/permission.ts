import { asList, asNumber, asObject, fail, oneofMember } from '../shared/config';
import { compileCidrRange } from '../matchers/cidr';
import { compileHeaderMatcher } from '../matchers/header-matcher';
import { compileMetadataMatcher } from '../matchers/metadata-matcher';
import { compilePathMatcher, compileUriTemplateMatcher } from '../matchers/path-matcher';
import { compileStringMatcher } from '../matchers/string-matcher';
import type { RbacSubject } from './subject';

export type SubjectPredicate = (subject: RbacSubject) => boolean;

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
      return kind === 'and_rules' ? (s) => rules.every((rule) => rule(s)) : (s) => rules.some((rule) => rule(s));
    }
    case 'any':
      return () => true;
    case 'not_rule': {
      const inner = compilePermission(permission.not_rule, at);
      return (s) => !inner(s);
    }
    case 'header': {
      const test = compileHeaderMatcher(permission.header, at);
      return (s) => test(s.headers);
    }
    case 'url_path': {
      const test = compilePathMatcher(permission.url_path, at);
      return (s) => test(s.path);
    }
    case 'uri_template':
    case 'matcher': {
      // `matcher` is honoured only when it carries a URI template, the one extension the mesh generates.
      const test = compileUriTemplateMatcher(permission[kind], at);
      return (s) => test(s.path);
    }
    case 'destination_ip': {
      const test = compileCidrRange(permission.destination_ip, at);
      return (s) => test(s.connection.localAddress);
    }
    case 'destination_port': {
      const port = asNumber(permission.destination_port, at);
      return (s) => s.connection.localPort === port;
    }
    case 'destination_port_range': {
      const range = asObject(permission.destination_port_range, at);
      const start = asNumber(range.start, `${at}.start`);
      const end = asNumber(range.end, `${at}.end`);
      if (end < start) fail(at, `end ${end} is before start ${start}`);
      return (s) => s.connection.localPort >= start && s.connection.localPort < end;
    }
    case 'metadata': {
      const test = compileMetadataMatcher(permission.metadata, at);
      return (s) => test(s.metadata);
    }
    default: {
      // No SNI is the empty server name, as Envoy's `requestedServerName()`.
      const test = compileStringMatcher(permission.requested_server_name, at);
      return (s) => test(s.connection.sni ?? '');
    }
  }
}

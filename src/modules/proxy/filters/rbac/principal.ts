import { asList, asObject, oneofMember, optionalObject } from '../shared/config';
import { compileCidrRange } from '../matchers/cidr';
import { compileHeaderMatcher } from '../matchers/header-matcher';
import { compileMetadataMatcher } from '../matchers/metadata-matcher';
import { compilePathMatcher } from '../matchers/path-matcher';
import { compileStringMatcher } from '../matchers/string-matcher';
import type { SubjectPredicate } from './permission';

const IDENTIFIERS = [
  'and_ids', 'or_ids', 'any', 'authenticated', 'source_ip', 'direct_remote_ip', 'remote_ip',
  'header', 'url_path', 'metadata', 'not_id',
] as const;

/** envoy.config.rbac.v3.Principal → predicate over who sends the request or opened the connection. */
export function compilePrincipal(value: unknown, field: string): SubjectPredicate {
  const principal = asObject(value, field);
  // No filter state reaches the built-in proxy's filters, so a policy on it cannot be enforced.
  const kind = oneofMember(principal, IDENTIFIERS, field, ['filter_state']);
  const at = `${field}.${kind}`;
  switch (kind) {
    case 'and_ids':
    case 'or_ids': {
      const ids = asList(asObject(principal[kind], at).ids, `${at}.ids`).map((p, i) => compilePrincipal(p, `${at}.ids[${i}]`));
      return kind === 'and_ids' ? (s) => ids.every((id) => id(s)) : (s) => ids.some((id) => id(s));
    }
    case 'any':
      return () => true;
    case 'not_id': {
      const inner = compilePrincipal(principal.not_id, at);
      return (s) => !inner(s);
    }
    case 'authenticated': {
      // Without a verified client certificate there is no authenticated peer: never a match.
      const name = optionalObject(asObject(principal.authenticated, at).principal_name, `${at}.principal_name`);
      const test = name ? compileStringMatcher(name, `${at}.principal_name`) : () => true;
      return (s) => s.connection.peerPrincipal !== undefined && test(s.connection.peerPrincipal);
    }
    case 'source_ip':
    case 'direct_remote_ip': {
      const test = compileCidrRange(principal[kind], at);
      return (s) => test(s.connection.remoteAddress);
    }
    case 'remote_ip': {
      const test = compileCidrRange(principal.remote_ip, at);
      return (s) => test(s.remoteAddress);
    }
    case 'header': {
      const test = compileHeaderMatcher(principal.header, at);
      return (s) => test(s.headers);
    }
    case 'url_path': {
      const test = compilePathMatcher(principal.url_path, at);
      return (s) => test(s.path);
    }
    default: {
      const test = compileMetadataMatcher(principal.metadata, at);
      return (s) => test(s.metadata);
    }
  }
}

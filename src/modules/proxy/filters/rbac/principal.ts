import { asList, asObject, oneofMember, optionalObject } from '../shared/config';
import { compileCidrRange } from '../matchers/cidr';
import { compileHeaderMatcher } from '../matchers/header-matcher';
import { compileMetadataMatcher } from '../matchers/metadata-matcher';
import { compilePathMatcher } from '../matchers/path-matcher';
import { compileStringMatcher } from '../matchers/string-matcher';
import { allOf, always, anyOf, compact, leaf, metadataLabel, metadataObserved, not, quoted, SubjectPredicate } from './explain';

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
      return kind === 'and_ids' ? allOf(ids) : anyOf(ids);
    }
    case 'any':
      return always('any');
    case 'not_id':
      return not(compilePrincipal(principal.not_id, at));
    case 'authenticated': {
      // Without a verified client certificate there is no authenticated peer: never a match.
      const name = optionalObject(asObject(principal.authenticated, at).principal_name, `${at}.principal_name`);
      const test = name ? compileStringMatcher(name, `${at}.principal_name`) : () => true;
      return leaf(
        `authenticated principal ${name ? compact(name) : '(any)'}`,
        (s) => s.connection.peerPrincipal !== undefined && test(s.connection.peerPrincipal),
        (s) => quoted(s.connection.peerPrincipal, '(no client certificate: plain text)'),
      );
    }
    case 'source_ip':
    case 'direct_remote_ip': {
      const test = compileCidrRange(principal[kind], at);
      return leaf(`${kind} ${compact(principal[kind])}`, (s) => test(s.connection.remoteAddress), (s) => s.connection.remoteAddress);
    }
    case 'remote_ip': {
      const test = compileCidrRange(principal.remote_ip, at);
      return leaf(`remote_ip ${compact(principal.remote_ip)}`, (s) => test(s.remoteAddress), (s) => s.remoteAddress);
    }
    case 'header': {
      const test = compileHeaderMatcher(principal.header, at);
      const name = String((principal.header as { name?: string }).name ?? '').toLowerCase();
      return leaf(`header ${compact(principal.header)}`, (s) => test(s.headers), (s) => quoted(s.headers?.[name]));
    }
    case 'url_path': {
      const test = compilePathMatcher(principal.url_path, at);
      return leaf(`url_path ${compact(principal.url_path)}`, (s) => test(s.path), (s) => `path ${quoted(s.path)}`);
    }
    default: {
      const test = compileMetadataMatcher(principal.metadata, at);
      const value = (principal.metadata as { value?: unknown }).value;
      return leaf(`${metadataLabel(principal.metadata)} ${compact(value)}`, (s) => test(s.metadata), metadataObserved(principal.metadata));
    }
  }
}

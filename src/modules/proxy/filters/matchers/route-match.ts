import { asBool, asList, asObject, fail, has, oneofMember, requiredString } from '../shared/config';
import { compileHeaderMatcher, HeaderPredicate } from './header-matcher';
import { compileRegexMatcher } from './regex';
import { compileStringMatcher, StringPredicate } from './string-matcher';
import { pathWithoutQuery } from './path-matcher';
import { queryParameters } from './query';

export type RequestPredicate = (request: { readonly path: string; readonly headers: Readonly<Record<string, string>> }) => boolean;

const PATH_SPECIFIERS = ['prefix', 'path', 'safe_regex', 'path_separated_prefix'] as const;

/**
 * envoy.config.route.v3.RouteMatch, as route tables and jwt_authn's rules use it: the path specifier (on the
 * path without query; `case_sensitive` defaults to true), plus every `headers` and
 * `query_parameters` matcher.
 */
export function compileRouteMatch(value: unknown, field: string): RequestPredicate {
  const match = asObject(value, field);
  for (const key of ['runtime_fraction', 'grpc', 'tls_context', 'dynamic_metadata']) {
    if (has(match, key)) fail(`${field}.${key}`, 'is not supported by the built-in proxy');
  }
  const kind = oneofMember(match, PATH_SPECIFIERS, field, ['connect_matcher', 'path_match_policy']);
  const caseSensitive = caseSensitivity(match.case_sensitive, `${field}.case_sensitive`);
  const fold = (s: string): string => (caseSensitive ? s : s.toLowerCase());
  let pathTest: StringPredicate;
  if (kind === 'safe_regex') {
    const regex = compileRegexMatcher(match.safe_regex, `${field}.safe_regex`);
    pathTest = (p) => regex.test(p);
  } else {
    const wanted = fold(kind === 'prefix' ? String(match.prefix ?? '') : requiredString(match[kind], `${field}.${kind}`));
    if (kind === 'prefix') pathTest = (p) => fold(p).startsWith(wanted);
    else if (kind === 'path') pathTest = (p) => fold(p) === wanted;
    else pathTest = (p) => fold(p) === wanted || fold(p).startsWith(`${wanted}/`);
  }
  const headers: HeaderPredicate[] = asList(match.headers, `${field}.headers`).map((h, i) => compileHeaderMatcher(h, `${field}.headers[${i}]`));
  const params = asList(match.query_parameters, `${field}.query_parameters`).map((q, i) => compileQueryParameterMatcher(q, `${field}.query_parameters[${i}]`));
  return (request) =>
    pathTest(pathWithoutQuery(request.path)) &&
    headers.every((test) => test(request.headers)) &&
    (params.length === 0 || params.every((test) => test(queryParameters(request.path))));
}

/** `case_sensitive` is a BoolValue (`{ value }`); absent means true. */
function caseSensitivity(value: unknown, field: string): boolean {
  if (value === undefined || value === null) return true;
  return asBool(asObject(value, field).value, `${field}.value`);
}

function compileQueryParameterMatcher(value: unknown, field: string): (query: Map<string, string>) => boolean {
  const matcher = asObject(value, field);
  const name = requiredString(matcher.name, `${field}.name`);
  if (has(matcher, 'string_match')) {
    const test = compileStringMatcher(matcher.string_match, `${field}.string_match`);
    return (query) => query.has(name) && test(query.get(name)!);
  }
  // `present_match: false` asks for the parameter's absence; `true` or no specifier for its presence.
  const wanted = matcher.present_match !== false;
  return (query) => query.has(name) === wanted;
}

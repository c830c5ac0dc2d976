import { asObject, oneofMember } from '../shared/config';
import { compileStringMatcher } from './string-matcher';
import { compileUriTemplate, uriTemplateOf } from './uri-template';

/** A request path predicate; `undefined` is a connection without HTTP (never matches). */
export type PathPredicate = (path: string | undefined) => boolean;

/** `:path` without its query string and fragment, as Envoy's path matchers see it. */
export function pathWithoutQuery(path: string): string {
  const end = path.search(/[?#]/);
  return end < 0 ? path : path.slice(0, end);
}

/** envoy.type.matcher.v3.PathMatcher. */
export function compilePathMatcher(value: unknown, field: string): PathPredicate {
  const matcher = asObject(value, field);
  oneofMember(matcher, ['path'], field);
  const test = compileStringMatcher(matcher.path, `${field}.path`);
  return (path) => path !== undefined && test(pathWithoutQuery(path));
}

/** A TypedExtensionConfig holding a UriTemplateMatchConfig. */
export function compileUriTemplateMatcher(extension: unknown, field: string): PathPredicate {
  const regex = compileUriTemplate(uriTemplateOf(extension, field), `${field}.typed_config.path_template`);
  return (path) => path !== undefined && regex.test(pathWithoutQuery(path));
}

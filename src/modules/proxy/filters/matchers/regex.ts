import { asObject, fail, requiredString } from '../shared/config';

/**
 * Envoy's regexes are RE2, matched against the whole value. JavaScript's engine reads nearly
 * the same syntax; the few RE2-only spellings xDS configs use are rewritten here.
 */
const POSIX_CLASSES: Record<string, string> = {
  alnum: '0-9A-Za-z',
  alpha: 'A-Za-z',
  ascii: '\\x00-\\x7F',
  blank: '\\t ',
  cntrl: '\\x00-\\x1F\\x7F',
  digit: '0-9',
  graph: '!-~',
  lower: 'a-z',
  print: ' -~',
  punct: '!-\\/:-@\\[-`{-~',
  space: '\\t\\n\\v\\f\\r ',
  upper: 'A-Z',
  word: '0-9A-Za-z_',
  xdigit: '0-9A-Fa-f',
};

/** A full-match RegExp for an RE2 pattern; throws naming `field` when it does not compile. */
export function fullMatchRegex(pattern: string, field: string): RegExp {
  let source = pattern;
  let flags = '';
  // RE2 allows leading inline flags; JavaScript takes them as RegExp flags.
  const inline = /^\(\?([imsU]+)\)/.exec(source);
  if (inline) {
    if (inline[1].includes('U')) fail(field, `regex ${JSON.stringify(pattern)}: the U (ungreedy) flag is not supported`);
    flags = [...new Set(inline[1])].join('');
    source = source.slice(inline[0].length);
  }
  source = source
    .replace(/\(\?P</g, '(?<')
    .replace(/\[:(\^?)([a-z]+):\]/g, (whole, negate: string, name: string) => {
      const chars = POSIX_CLASSES[name];
      if (!chars) return whole;
      if (negate) fail(field, `regex ${JSON.stringify(pattern)}: negated POSIX class [:^${name}:] is not supported`);
      return chars;
    })
    .replace(/\\A/g, '^')
    .replace(/\\z/g, '$');
  try {
    return new RegExp(`^(?:${source})$`, flags);
  } catch (err) {
    return fail(field, `regex ${JSON.stringify(pattern)} does not compile: ${(err as Error).message}`);
  }
}

/** envoy.type.matcher.v3.RegexMatcher → full-match RegExp. */
export function compileRegexMatcher(value: unknown, field: string): RegExp {
  const matcher = asObject(value, field);
  return fullMatchRegex(requiredString(matcher.regex, `${field}.regex`), `${field}.regex`);
}

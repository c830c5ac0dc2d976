import type * as protobuf from 'protobufjs';
import { protobufLibrary } from '../../../shared/protobuf-library';
import { FullMatcher, quoteRe2 } from '../../../shared/re2';
import { asObject, asString, fail, isObject } from '../shared/config';
import { fullMatchRegex } from './regex';

/**
 * Envoy's URI template path matcher (`envoy.extensions.path.match.uri_template.v3`):
 * `*` is one path segment, `**` any remaining text (slashes included, nothing glob-like after
 * it), `{name}` / `{name=a/*}` capture a segment or a sub-pattern, a trailing literal after an
 * operator is a suffix. Matched against the path without query.
 */
export const URI_TEMPLATE_TYPE = 'envoy.extensions.path.match.uri_template.v3.UriTemplateMatchConfig';
const TYPED_STRUCTS = new Set(['udpa.type.v1.TypedStruct', 'xds.type.v3.TypedStruct']);

// RFC 3986 pchar without '*' (Envoy's literal alphabet).
const LITERAL_CHARS = "a-zA-Z0-9\\-._~%!$&'()+,;:@=";
const LITERAL = new RegExp(`^[${LITERAL_CHARS}]+$`);
const SEGMENT = `[${LITERAL_CHARS}]+`;
const TEXT = `[${LITERAL_CHARS}/]*`;
const VARIABLE_NAME = /^[a-zA-Z][a-zA-Z0-9_]*$/;
const MAX_VARIABLES = 5;
const MAX_VARIABLE_NAME = 16;

type Piece = { literal: string } | { glob: 'segment' | 'text' } | { variable: string; match: Piece[] };

class TemplateParser {
  private seenTextGlob = false;
  private readonly variables = new Set<string>();

  constructor(private readonly template: string, private readonly field: string) {}

  toMatcher(): FullMatcher {
    if (!/^\/[!-~]*$/.test(this.template)) this.error('must start with "/" and hold only printable characters');
    let rest = this.template.slice(1);
    const segments: Piece[] = [];
    let suffix = '';
    while (rest !== '') {
      let piece: Piece;
      [piece, rest] = rest.startsWith('*') ? this.operator(rest) : rest.startsWith('{') ? this.variable(rest) : this.literal(rest);
      segments.push(piece);
      if (rest === '') break;
      if (rest === '/') {
        segments.push({ literal: '' });
        break;
      }
      if (rest.startsWith('/')) {
        rest = rest.slice(1);
        continue;
      }
      [piece, rest] = this.literal(rest);
      suffix = (piece as { literal: string }).literal;
      if (rest !== '') this.error('a suffix may not contain "/" (prefix matching is not supported)');
    }
    // Envoy compiles templates to RE2 as well; the source is RE2 syntax by construction.
    return fullMatchRegex(`/${segments.map((p) => this.regexOf(p)).join('/')}${quoteRe2(suffix)}`, this.field);
  }

  private operator(text: string): [Piece, string] {
    const glob = text.startsWith('**') ? 'text' : 'segment';
    this.noGlobAfterTextGlob();
    if (glob === 'text') this.seenTextGlob = true;
    return [{ glob }, text.slice(glob === 'text' ? 2 : 1)];
  }

  private literal(text: string): [Piece, string] {
    const end = text.indexOf('/');
    const literal = end < 0 ? text : text.slice(0, end);
    if (!LITERAL.test(literal)) this.error(`invalid literal ${JSON.stringify(literal)}`);
    return [{ literal }, text.slice(literal.length)];
  }

  private variable(text: string): [Piece, string] {
    const close = text.indexOf('}');
    if (close < 0) this.error(`unmatched "{" in ${JSON.stringify(text)}`);
    const [name, ...matchParts] = text.slice(1, close).split('=');
    if (!VARIABLE_NAME.test(name) || name.length > MAX_VARIABLE_NAME) this.error(`invalid variable name ${JSON.stringify(name)}`);
    if (this.variables.has(name)) this.error(`repeated variable name ${JSON.stringify(name)}`);
    this.variables.add(name);
    if (this.variables.size > MAX_VARIABLES) this.error(`more than ${MAX_VARIABLES} variables`);
    const match: Piece[] = [];
    if (matchParts.length === 0) {
      // A bare variable is a one-segment glob.
      this.noGlobAfterTextGlob();
    } else {
      const spec = matchParts.join('=');
      if (spec === '') this.error(`empty match in variable ${JSON.stringify(name)}`);
      for (const item of spec.split('/')) {
        if (item === '') this.error(`invalid variable match ${JSON.stringify(spec)}`);
        match.push(item.startsWith('*') ? this.wholeOperator(item) : this.literal(item)[0]);
      }
    }
    return [{ variable: name, match }, text.slice(close + 1)];
  }

  private wholeOperator(item: string): Piece {
    const [piece, rest] = this.operator(item);
    if (rest !== '') this.error(`invalid operator ${JSON.stringify(item)}`);
    return piece;
  }

  private noGlobAfterTextGlob(): void {
    if (this.seenTextGlob) this.error('no glob may follow "**"');
  }

  private regexOf(piece: Piece): string {
    if ('literal' in piece) return quoteRe2(piece.literal);
    if ('glob' in piece) return piece.glob === 'text' ? TEXT : SEGMENT;
    return piece.match.length === 0 ? `(?:${SEGMENT})` : `(?:${piece.match.map((p) => this.regexOf(p)).join('/')})`;
  }

  private error(problem: string): never {
    return fail(this.field, `path template ${JSON.stringify(this.template)}: ${problem}`);
  }
}

/** A path template → full-match matcher over the path without query. */
export function compileUriTemplate(template: string, field: string): FullMatcher {
  return new TemplateParser(template, field).toMatcher();
}

/** A string field of a TypedStruct's Struct value (`{ fields: { name: { string_value } } }`). */
function typedStructField(struct: unknown, name: string): unknown {
  const fields = isObject(struct) && isObject(struct.fields) ? struct.fields : {};
  const value = fields[name];
  return isObject(value) ? value.string_value : undefined;
}

let rawConfigType: protobuf.Type | undefined;

function decodeRawConfig(base64: string, field: string): string {
  // Only needed when the proto set that decoded the filter lacked this type and left the Any opaque.
  rawConfigType ??= new (protobufLibrary().Type)('UriTemplateMatchConfig').add(new (protobufLibrary().Field)('path_template', 1, 'string'));
  try {
    const decoded = rawConfigType.toObject(rawConfigType.decode(Buffer.from(base64, 'base64'))) as { path_template?: string };
    return decoded.path_template ?? '';
  } catch (err) {
    return fail(field, `is not a UriTemplateMatchConfig: ${(err as Error).message}`);
  }
}

/**
 * The path template of a TypedExtensionConfig holding a UriTemplateMatchConfig, in whichever
 * form the decoder produced it: `@type` with fields, an opaque `{ type_url, value }`, or a TypedStruct.
 */
export function uriTemplateOf(extension: unknown, field: string): string {
  const typed = asObject(asObject(extension, field).typed_config, `${field}.typed_config`);
  const typeName = (url: unknown): string => asString(url, `${field}.typed_config`).replace(/^.*\//, '');
  let template: unknown;
  if (typed['@type'] !== undefined) {
    const name = typeName(typed['@type']);
    if (name === URI_TEMPLATE_TYPE) template = typed.path_template;
    else if (TYPED_STRUCTS.has(name) && typeName(typed.type_url) === URI_TEMPLATE_TYPE) template = typedStructField(typed.value, 'path_template');
    else fail(`${field}.typed_config`, `type ${name} is not supported (expected ${URI_TEMPLATE_TYPE})`);
  } else if (typed.type_url !== undefined) {
    if (typeName(typed.type_url) !== URI_TEMPLATE_TYPE) fail(`${field}.typed_config`, `type ${typeName(typed.type_url)} is not supported (expected ${URI_TEMPLATE_TYPE})`);
    template = decodeRawConfig(asString(typed.value, `${field}.typed_config.value`), `${field}.typed_config.value`);
  } else {
    fail(`${field}.typed_config`, `carries no ${URI_TEMPLATE_TYPE} (its type was unknown to the encoder?)`);
  }
  if (typeof template !== 'string' || template === '') fail(`${field}.typed_config.path_template`, 'must be a non-empty string');
  return template;
}

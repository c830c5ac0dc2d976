import { Composer, CST, Document, LineCounter, Parser } from 'yaml';
import { ConfigIssue } from './issues';
import { ConfigFileLimits, DEFAULT_CONFIG_FILE_LIMITS } from './limits';
import { FileLimitExceeded, measureDocument, nestedTooDeep, YamlCounts } from './measure';
import { ConfigResource } from './resource';
import { KindRegistry, validateDocument } from './validate';

export interface ParsedResource {
  resource: ConfigResource;
  location: { file: string; documentIndex: number; line?: number };
}

export interface ParseResult {
  resources: ParsedResource[];
  issues: ConfigIssue[];
  /**
   * The file as a whole is bad (not UTF-8 text, a YAML syntax error, a limit passed): its
   * document boundaries cannot be trusted, so none of its resources should be applied.
   */
  fileRejected?: boolean;
}

/**
 * Parses one file's bytes: UTF-8 text first (binary content is one issue, not one per line),
 * then the YAML within the file limits. What the daemon's worker and `meshctl validate` run.
 */
export function parseConfigBytes(file: string, bytes: Uint8Array, kinds: KindRegistry, limits: ConfigFileLimits = DEFAULT_CONFIG_FILE_LIMITS): ParseResult {
  const decoded = decodeConfigText(file, bytes);
  if ('issue' in decoded) return { resources: [], issues: [decoded.issue], fileRejected: true };
  return parseConfigText(file, decoded.text, kinds, limits);
}

/**
 * Parses one file's text (YAML, multi-document; JSON is YAML too) into validated resources
 * and the issues of the documents that are not. A bad document is rejected alone; a syntax
 * error or a passed limit rejects the file, reported once.
 *
 * Documents are composed one at a time from the syntax tree, and each limit is checked before
 * the work it guards: nesting and document count on the tree (the composer recurses), alias
 * count and expansion before values are built (the billion laughs).
 */
export function parseConfigText(file: string, text: string, kinds: KindRegistry, limits: ConfigFileLimits = DEFAULT_CONFIG_FILE_LIMITS): ParseResult {
  const lines = new LineCounter();
  const lineAt = (offset: number) => lines.linePos(offset).line;
  // Duplicate keys are found by measureDocument in linear time; yaml's own check is quadratic.
  const composer = new Composer({ uniqueKeys: false });
  const result: ParseResult = { resources: [], issues: [] };
  const counts: YamlCounts = { aliases: 0, aliasExpansion: 0 };
  const syntax = new SyntaxErrors(file, lineAt);
  const rejectFile = (issue: ConfigIssue): ParseResult => ({ resources: [], issues: [issue], fileRejected: true });
  let documents = 0;
  let composed = 0;

  const take = (doc: Document.Parsed): ConfigIssue | undefined => {
    const documentIndex = composed++;
    if (doc.errors.length > 0) {
      syntax.add(doc.errors, documentIndex);
      return undefined;
    }
    try {
      measureDocument(doc, limits, counts);
    } catch (err) {
      if (!(err instanceof FileLimitExceeded)) throw err;
      const issue = { location: { file, documentIndex, line: lineAt(err.offset) }, message: err.message };
      if (err.syntax) {
        syntax.addIssue(issue);
        return undefined;
      }
      return issue;
    }
    addDocument(result, doc, documentIndex, file, kinds, lineAt);
    return undefined;
  };

  try {
    for (const token of new Parser(lines.addNewLine).parse(text)) {
      if (token.type === 'document') {
        if (documents >= limits.maxDocuments) {
          return rejectFile({ location: { file, line: lineAt(token.offset) }, message: `more than ${limits.maxDocuments} YAML documents (the limit per file)` });
        }
        const deepAt = nestedTooDeep(token as CST.Document, limits.maxDepth);
        if (deepAt !== undefined) {
          return rejectFile({ location: { file, documentIndex: documents, line: lineAt(deepAt) }, message: `nested more than ${limits.maxDepth} levels deep (the limit)` });
        }
        documents++;
      }
      for (const doc of composer.next(token)) {
        const limit = take(doc as Document.Parsed);
        if (limit) return rejectFile(limit);
      }
    }
    for (const doc of composer.end()) {
      const limit = take(doc as Document.Parsed);
      if (limit) return rejectFile(limit);
    }
  } catch (err) {
    // Whatever the YAML library throws stays this file's problem.
    return rejectFile({ location: { file }, message: `cannot parse: ${(err as Error).message}` });
  }
  // Errors outside any document (e.g. a stray token before the first one).
  syntax.add(composer.streamInfo().errors, undefined);
  const first = syntax.issue();
  if (first) {
    result.issues.push(first);
    result.fileRejected = true;
  }
  return result;
}

/** Validates one well-formed document into a resource, or its issues with the line of each field. */
function addDocument(result: ParseResult, doc: Document.Parsed, documentIndex: number, file: string, kinds: KindRegistry, lineAt: (offset: number) => number): void {
  const start = doc.contents?.range?.[0] ?? doc.range?.[0];
  const startLine = start !== undefined ? lineAt(start) : undefined;
  // Aliases were measured and found bounded and acyclic; yaml's own heuristic would second-guess that.
  const value = doc.toJS({ maxAliasCount: -1 });
  if (value === null || value === undefined) return; // an empty document, e.g. after a trailing ---
  const validated = validateDocument(value, kinds);
  if (validated.ok) {
    result.resources.push({ resource: validated.resource, location: { file, documentIndex, line: startLine } });
    return;
  }
  for (const issue of validated.issues) {
    const node = issue.field ? doc.getIn(toPath(issue.field), true) : undefined;
    const range = (node as { range?: [number, number, number] } | undefined)?.range;
    const line = range ? lineAt(range[0]) : startLine;
    result.issues.push({
      location: { file, documentIndex, line },
      kind: validated.kind,
      namespace: validated.namespace,
      name: validated.name,
      field: issue.field || undefined,
      message: issue.message,
    });
  }
}

/** A file's YAML syntax errors, reported as one issue: the first, and how many more there are. */
class SyntaxErrors {
  private first: ConfigIssue | undefined;
  private count = 0;

  constructor(
    private readonly file: string,
    private readonly lineAt: (offset: number) => number,
  ) {}

  add(errors: readonly { message: string; pos: [number, number] }[], documentIndex: number | undefined): void {
    for (const err of errors) {
      this.addIssue({ location: { file: this.file, documentIndex, line: this.lineAt(err.pos[0]) }, message: err.message.split('\n')[0] });
    }
  }

  addIssue(issue: ConfigIssue): void {
    this.count++;
    this.first ??= issue;
  }

  issue(): ConfigIssue | undefined {
    if (!this.first) return undefined;
    const more = this.count - 1;
    const tail = more > 0 ? ` (and ${more} more YAML error${more === 1 ? '' : 's'} in this file)` : '';
    return { ...this.first, message: `invalid YAML: ${this.first.message}${tail}` };
  }
}

/**
 * The file's text, or the one issue that says why it is not text: a NUL byte (binary
 * content, or UTF-16) or a byte sequence that is not UTF-8.
 */
export function decodeConfigText(file: string, bytes: Uint8Array): { text: string } | { issue: ConfigIssue } {
  const nul = bytes.indexOf(0);
  if (nul >= 0) {
    const utf16 = (bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff);
    const message = utf16 ? 'UTF-16 text: config files must be UTF-8' : `binary content (a NUL byte at offset ${nul}): config files are UTF-8 YAML or JSON text`;
    return { issue: { location: { file, line: lineOfOffset(bytes, nul) }, message } };
  }
  try {
    return { text: new TextDecoder('utf-8', { fatal: true }).decode(bytes) };
  } catch {
    // Where it breaks, for the message: decoding leniently marks the bad bytes with U+FFFD.
    const lenient = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
    const at = Math.max(0, lenient.indexOf('\uFFFD'));
    const offset = Buffer.byteLength(lenient.slice(0, at));
    return { issue: { location: { file, line: lineOfOffset(bytes, offset) }, message: `not UTF-8 text (an invalid byte sequence at offset ${offset}): config files are UTF-8 YAML or JSON text` } };
  }
}

function lineOfOffset(bytes: Uint8Array, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset; i++) if (bytes[i] === 0x0a) line++;
  return line;
}

/** `spec.http[0].route` → ['spec', 'http', 0, 'route'], for finding the field's line. */
function toPath(field: string): (string | number)[] {
  return field
    .split(/\.|\[(\d+)\]/)
    .filter((p) => p !== undefined && p !== '')
    .map((p) => (/^\d+$/.test(p) ? Number(p) : p));
}

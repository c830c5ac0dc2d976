import { Composer, CST, Document, isMap, isScalar, isSeq, LineCounter, Parser } from 'yaml';
import { FieldLines } from './field-lines';
import { ConfigIssue } from './issues';
import { ConfigFileLimits, DEFAULT_CONFIG_FILE_LIMITS } from './limits';
import { FileLimitExceeded, measureDocument, nestedTooDeep, YamlCounts } from './measure';
import { ConfigResource } from './resource';
import { KindRegistry, validateDocument } from './validate';

/** One well-formed YAML document, before validation: its value and where each field stands. */
export interface ParsedDocument {
  documentIndex: number;
  value: unknown;
  startLine?: number;
  /** The line of each field's value, by the path validation names it with (`spec.http[0].route`). */
  fieldLines: FieldLines;
}

/**
 * A file parsed within its limits but not yet validated: what the daemon's parse worker hands
 * back (plain data), so validation runs against the kinds the container bound.
 */
export interface ParsedFile {
  documents: ParsedDocument[];
  /** Syntax errors and passed limits. */
  issues: ConfigIssue[];
  fileRejected?: boolean;
}

export interface ParsedResource {
  resource: ConfigResource;
  location: { file: string; documentIndex: number; line?: number };
}

export interface ParseResult {
  resources: ParsedResource[];
  issues: ConfigIssue[];
  /** What valid resources probably do not mean (unreachable routes...): reported, never refused. */
  warnings: ConfigIssue[];
  /**
   * The file as a whole is bad (not UTF-8 text, a YAML syntax error, a limit passed): its
   * document boundaries cannot be trusted, so none of its resources should be applied.
   */
  fileRejected?: boolean;
}

/** Parses and validates one file's bytes (what `meshctl validate` runs; the daemon splits the two). */
export function parseConfigBytes(file: string, bytes: Uint8Array, kinds: KindRegistry, limits: ConfigFileLimits = DEFAULT_CONFIG_FILE_LIMITS): ParseResult {
  return validateParsedFile(file, parseConfigDocuments(file, bytes, limits), kinds);
}

/** Parses and validates one file's text. */
export function parseConfigText(file: string, text: string, kinds: KindRegistry, limits: ConfigFileLimits = DEFAULT_CONFIG_FILE_LIMITS): ParseResult {
  return validateParsedFile(file, parseYamlDocuments(file, text, limits), kinds);
}

/**
 * Parses one file's bytes: UTF-8 text first (binary content is one issue, not one per line),
 * then the YAML within the file limits. What the daemon's parse worker runs.
 */
export function parseConfigDocuments(file: string, bytes: Uint8Array, limits: ConfigFileLimits = DEFAULT_CONFIG_FILE_LIMITS): ParsedFile {
  const decoded = decodeConfigText(file, bytes);
  if ('issue' in decoded) return { documents: [], issues: [decoded.issue], fileRejected: true };
  return parseYamlDocuments(file, decoded.text, limits);
}

/**
 * What one document validated to: its resource and warnings, or its issues. The daemon's parse
 * worker validates documents of the built-in kinds itself and hands back this (plain data).
 */
export interface DocumentOutcome {
  resource?: ParsedResource;
  issues: ConfigIssue[];
  warnings: ConfigIssue[];
}

/** A document validated where it was parsed. */
export interface ValidatedDocument {
  documentIndex: number;
  outcome: DocumentOutcome;
}

/** A parsed file whose documents of the built-in kinds the parse worker validated already. */
export type PartlyValidatedFile = Omit<ParsedFile, 'documents'> & { documents: (ParsedDocument | ValidatedDocument)[] };

/** Validates each parsed document into a resource, or its issues with the line of each field. */
export function validateParsedFile(file: string, parsed: PartlyValidatedFile, kinds: KindRegistry): ParseResult {
  const result: ParseResult = { resources: [], issues: [], warnings: [], ...(parsed.fileRejected ? { fileRejected: true } : {}) };
  for (const doc of parsed.documents) {
    const outcome = 'outcome' in doc ? doc.outcome : validateParsedDocument(file, doc, kinds);
    if (outcome.resource) result.resources.push(outcome.resource);
    result.issues.push(...outcome.issues);
    result.warnings.push(...outcome.warnings);
  }
  // The file's own issues (syntax, limits) come after what its documents say, as they were found.
  result.issues.push(...parsed.issues);
  return result;
}

/** Validates one parsed document into a resource, or its issues with the line of each field. */
export function validateParsedDocument(file: string, doc: ParsedDocument, kinds: KindRegistry): DocumentOutcome {
  const validated = validateDocument(doc.value, kinds);
  if (validated.ok) {
    const { kind, metadata } = validated.resource;
    return {
      resource: { resource: validated.resource, location: { file, documentIndex: doc.documentIndex, line: doc.startLine } },
      issues: [],
      warnings: validated.warnings.map((w) => ({ location: { file, documentIndex: doc.documentIndex, line: lineOfField(doc, w.field) }, kind, namespace: metadata.namespace, name: metadata.name, field: w.field || undefined, message: w.message })),
    };
  }
  const issues = validated.issues.map((issue) => ({
    location: { file, documentIndex: doc.documentIndex, line: lineOfField(doc, issue.field) },
    kind: validated.kind,
    namespace: validated.namespace,
    name: validated.name,
    field: issue.field || undefined,
    message: issue.message,
  }));
  return { issues, warnings: [] };
}

/** The line of a field, or the document's when the field is not in it (a missing field). */
function lineOfField(doc: ParsedDocument, field: string): number | undefined {
  return (field ? doc.fieldLines.lineOf(field) : undefined) ?? doc.startLine;
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
function parseYamlDocuments(file: string, text: string, limits: ConfigFileLimits): ParsedFile {
  const lines = new LineCounter();
  const lineAt = (offset: number) => lines.linePos(offset).line;
  // Duplicate keys are found by measureDocument in linear time; yaml's own check is quadratic.
  const composer = new Composer({ uniqueKeys: false });
  const result: ParsedFile = { documents: [], issues: [] };
  const counts: YamlCounts = { aliases: 0, aliasExpansion: 0 };
  const syntax = new SyntaxErrors(file, lineAt);
  const rejectFile = (issue: ConfigIssue): ParsedFile => ({ documents: [], issues: [issue], fileRejected: true });
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
    const parsed = documentOf(doc, documentIndex, lineAt);
    if (parsed) result.documents.push(parsed);
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

/** One well-formed document's value and the line of each of its fields; undefined when empty. */
function documentOf(doc: Document.Parsed, documentIndex: number, lineAt: (offset: number) => number): ParsedDocument | undefined {
  const start = doc.contents?.range?.[0] ?? doc.range?.[0];
  // Aliases were measured and found bounded and acyclic; yaml's own heuristic would second-guess that.
  const value = doc.toJS({ maxAliasCount: -1 });
  if (value === null || value === undefined) return undefined; // an empty document, e.g. after a trailing ---
  const fieldLines = FieldLines.build((note) => recordFieldLines(doc.contents, '', note, lineAt));
  return { documentIndex, value, startLine: start !== undefined ? lineAt(start) : undefined, fieldLines };
}

/** Walks the document's nodes (not through aliases) noting the line of each field's value. */
function recordFieldLines(node: unknown, path: string, note: (path: string, line: number) => void, lineAt: (offset: number) => number): void {
  if (isMap(node)) {
    for (const pair of node.items) {
      const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
      const at = path ? `${path}.${key}` : key;
      const range = (pair.value as { range?: [number, number, number] } | null)?.range ?? (pair.key as { range?: [number, number, number] } | null)?.range;
      if (range) note(at, lineAt(range[0]));
      recordFieldLines(pair.value, at, note, lineAt);
    }
  } else if (isSeq(node)) {
    node.items.forEach((item, i) => {
      const at = `${path}[${i}]`;
      const range = (item as { range?: [number, number, number] } | null)?.range;
      if (range) note(at, lineAt(range[0]));
      recordFieldLines(item, at, note, lineAt);
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

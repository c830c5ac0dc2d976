import { ConfigFileLimits, ConfigIssue, formatIssue, parseConfigDocuments, readConfigTargets } from '../config';
import { AnalysisObject, toAnalysisObject } from './objects';

/** What reading the inputs gave: objects, and what could not be read or parsed. */
export interface FileInputs {
  objects: AnalysisObject[];
  /** One line each, naming file and line. */
  problems: string[];
}

/**
 * Reads every file (directories recursively, `-` for stdin) with the mesh's own reader and YAML
 * parser: regular files only, the config size and alias limits, line numbers kept.
 */
export async function readFileInputs(targets: readonly string[], limits: ConfigFileLimits, stdin: import('node:stream').Readable = process.stdin): Promise<FileInputs> {
  const out: FileInputs = { objects: [], problems: [] };
  const parse = (name: string, bytes: Uint8Array) => {
    const parsed = parseConfigDocuments(name, bytes, limits);
    out.problems.push(...parsed.issues.map(describe));
    if (parsed.fileRejected) return;
    for (const doc of parsed.documents) {
      if (doc.value === null || doc.value === undefined) continue;
      const o = toAnalysisObject(doc.value, { file: name, ...(doc.startLine ? { line: doc.startLine } : {}) }, doc.fieldLines);
      if (o) out.objects.push(o);
      else out.problems.push(describe({ location: { file: name, documentIndex: doc.documentIndex, line: doc.startLine }, message: 'not a resource: kind and metadata.name are required' }));
    }
  };
  for await (const item of readConfigTargets(targets, limits.maxBytes, stdin)) {
    if (item.kind === 'bytes') parse(item.file, item.bytes);
    else if (item.kind === 'unread') out.problems.push(`${item.file}: ${item.skipped ? `skipped: ${item.message}` : item.message}`);
    else if (item.kind === 'unreadable-dir') out.problems.push(`${item.dir}: cannot list: ${item.message}`);
    else if (item.kind === 'target-error') out.problems.push(`${item.target}: ${item.message}`);
  }
  return out;
}

function describe(issue: ConfigIssue): string {
  return formatIssue(issue);
}

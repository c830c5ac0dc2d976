import { ConfigFileLimits, ConfigIssue, formatIssue, listConfigFiles, parseConfigDocuments, readConfigFile, readStreamAtMost } from '../config';
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
  for (const target of targets) {
    if (target === '-') {
      try {
        parse('<stdin>', await readStreamAtMost(stdin, limits.maxBytes));
      } catch (err) {
        out.problems.push(`<stdin>: ${(err as Error).message}`);
      }
      continue;
    }
    let listing;
    try {
      listing = await listConfigFiles(target);
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      out.problems.push(`${target}: ${e.code === 'ENOENT' ? 'no such file or directory' : e.message}`);
      continue;
    }
    out.problems.push(...listing.unreadableDirs.map(({ dir, message }) => `${dir}: cannot list: ${message}`));
    for (const file of listing.files) {
      const read = await readConfigFile(file, limits.maxBytes);
      if (read.kind === 'bytes') parse(file, read.bytes);
      else if (read.kind === 'gone') out.problems.push(`${file}: removed while being read`);
      else out.problems.push(`${file}: ${read.kind === 'skipped' ? `skipped: ${read.message}` : read.message}`);
    }
  }
  return out;
}

function describe(issue: ConfigIssue): string {
  return formatIssue(issue);
}

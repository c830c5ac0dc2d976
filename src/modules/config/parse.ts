import { LineCounter, parseAllDocuments } from 'yaml';
import { ConfigIssue } from './issues';
import { ConfigResource } from './resource';
import { KindRegistry, validateDocument } from './validate';

export interface ParsedResource {
  resource: ConfigResource;
  location: { file: string; documentIndex: number; line?: number };
}

export interface ParseResult {
  resources: ParsedResource[];
  issues: ConfigIssue[];
}

/**
 * Parses one file's text (YAML, multi-document; JSON is YAML too) into validated resources
 * and the issues of the documents that are not. A bad document is rejected alone.
 */
export function parseConfigText(file: string, text: string, kinds: KindRegistry): ParseResult {
  const lines = new LineCounter();
  const docs = parseAllDocuments(text, { lineCounter: lines, uniqueKeys: true });
  const result: ParseResult = { resources: [], issues: [] };
  const list = Array.isArray(docs) ? docs : [docs];
  list.forEach((doc, documentIndex) => {
    const start = doc.contents?.range?.[0] ?? doc.range?.[0];
    const startLine = start !== undefined ? lines.linePos(start).line : undefined;
    if (doc.errors.length > 0) {
      for (const err of doc.errors) {
        const line = err.linePos?.[0]?.line ?? startLine;
        result.issues.push({ location: { file, documentIndex, line }, message: `invalid YAML: ${err.message.split('\n')[0]}` });
      }
      return;
    }
    const value = doc.toJS();
    if (value === null || value === undefined) return; // an empty document, e.g. after a trailing ---
    const validated = validateDocument(value, kinds);
    if (validated.ok) {
      result.resources.push({ resource: validated.resource, location: { file, documentIndex, line: startLine } });
      return;
    }
    for (const issue of validated.issues) {
      const node = issue.field ? doc.getIn(toPath(issue.field), true) : undefined;
      const range = (node as { range?: [number, number, number] } | undefined)?.range;
      const line = range ? lines.linePos(range[0]).line : startLine;
      result.issues.push({
        location: { file, documentIndex, line },
        kind: validated.kind,
        namespace: validated.namespace,
        name: validated.name,
        field: issue.field || undefined,
        message: issue.message,
      });
    }
  });
  return result;
}

/** `spec.http[0].route` → ['spec', 'http', 0, 'route'], for finding the field's line. */
function toPath(field: string): (string | number)[] {
  return field
    .split(/\.|\[(\d+)\]/)
    .filter((p) => p !== undefined && p !== '')
    .map((p) => (/^\d+$/.test(p) ? Number(p) : p));
}

/** Where a resource came from: file, 0-based document index, 1-based line when known. */
export interface ConfigLocation {
  file: string;
  /** Absent for a problem of the whole file (its size, its encoding, a limit). */
  documentIndex?: number;
  line?: number;
}

/** One problem with one resource (or one document that is not a resource). */
export interface ConfigIssue {
  location: ConfigLocation;
  kind?: string;
  namespace?: string;
  name?: string;
  /** Dotted field path, e.g. `spec.http[0].route[1].weight`. */
  field?: string;
  message: string;
}

/** `file:line: document N (Kind namespace/name): field: message` — everything a user needs to find it. */
export function formatIssue(issue: ConfigIssue): string {
  const { file, documentIndex, line } = issue.location;
  const where = line ? `${file}:${line}` : file;
  const what = issue.kind ? ` ${issue.kind}${issue.name ? ` ${issue.namespace ?? 'default'}/${issue.name}` : ''}` : '';
  const field = issue.field ? `${issue.field}: ` : '';
  const document = documentIndex === undefined ? '' : `document ${documentIndex + 1}${what ? ` (${what.trim()})` : ''}: `;
  return `${where}: ${document}${field}${issue.message}`;
}

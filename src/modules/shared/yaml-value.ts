import type { Document } from 'yaml';
import { UserError } from './user-error';

/** Aliases one document may expand: plenty for real config, far too few for an alias bomb. */
export const MAX_YAML_ALIASES = 100;

/**
 * The value of a parsed YAML document, for the files meshctl reads. Its first syntax error, or
 * more aliases than MAX_YAML_ALIASES, is a one-line UserError naming `where` (after
 * `syntaxLabel`, e.g. "not valid YAML: ", for syntax errors).
 */
export function yamlDocumentValue(doc: Document, where: string, syntaxLabel = ''): unknown {
  if (doc.errors.length > 0) throw new UserError(`${where}: ${syntaxLabel}${firstLine(doc.errors[0].message)}`);
  try {
    return doc.toJS({ maxAliasCount: MAX_YAML_ALIASES });
  } catch (err) {
    throw new UserError(`${where}: ${firstLine((err as Error).message)}`);
  }
}

/** First line of a parser message, without the trailing colon that introduces its excerpt. */
function firstLine(text: string): string {
  return text.split('\n')[0].replace(/:\s*$/, '');
}

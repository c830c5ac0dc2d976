import { stringify } from 'yaml';

/** Prints a selected part of a dump as `-o json` (indented) or `-o yaml`. */
export function formatData(data: unknown, format: 'json' | 'yaml'): string {
  return format === 'yaml' ? stringify(data) : JSON.stringify(data, null, 2) + '\n';
}

import { stringify } from 'yaml';

/** JSON and YAML text as the incumbent's Go libraries write them. */

/** encoding/json's text: JSON with <, > and & escaped as Go writes them. */
export function goJSON(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

/** sigs.k8s.io/yaml's Marshal: block style, sorted keys, lists not indented under their key. */
export function goYAML(plain: unknown): string {
  return stringify(plain, { indentSeq: false, sortMapEntries: true, lineWidth: 0, minContentWidth: 0, aliasDuplicateObjects: false });
}

/*
 * The orchestrator's name formats, for checking user input before it reaches the API
 * server (which would reject it with a less helpful message, over and over, on every relist).
 */

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const QUALIFIED_NAME_PART = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;

/** A DNS-1123 label: container names. */
export function isDnsLabel(value: string): boolean {
  return value.length <= 63 && DNS_LABEL.test(value);
}

/** A DNS-1123 subdomain: node names, label and annotation key prefixes. */
export function isDnsSubdomain(value: string): boolean {
  return value.length > 0 && value.length <= 253 && value.split('.').every(isDnsLabel);
}

/** `[prefix/]name`: label and annotation keys. Returns why not, or undefined when it is one. */
export function qualifiedNameProblem(value: string): string | undefined {
  const parts = value.split('/');
  if (parts.length > 2) return 'a key has at most one "/"';
  const name = parts[parts.length - 1];
  if (parts.length === 2 && !isDnsSubdomain(parts[0])) return `prefix ${JSON.stringify(parts[0])} is not a lower-case DNS subdomain`;
  if (name.length === 0) return 'the name part is empty';
  if (name.length > 63) return 'the name part is longer than 63 characters';
  if (!QUALIFIED_NAME_PART.test(name)) {
    return 'the name part must be alphanumeric characters, "-", "_" or ".", starting and ending with an alphanumeric character';
  }
  return undefined;
}

/** A label value: empty, or up to 63 characters of the qualified-name alphabet. Returns why not. */
export function labelValueProblem(value: string): string | undefined {
  if (value === '') return undefined;
  if (value.length > 63) return 'a label value is at most 63 characters';
  if (!QUALIFIED_NAME_PART.test(value)) {
    return 'a label value must be alphanumeric characters, "-", "_" or ".", starting and ending with an alphanumeric character';
  }
  return undefined;
}

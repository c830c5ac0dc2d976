/** How verified claims leave the filter: request headers (claim_to_headers) and metadata. */

/** A claim by name; `a.b` reaches into nested objects, as Envoy's StructUtils. */
export function claimAt(payload: Record<string, unknown>, name: string): unknown {
  let current: unknown = payload;
  for (const key of name.split('.')) {
    if (typeof current !== 'object' || current === null || Array.isArray(current)) return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}

/**
 * A claim as a header value, Envoy's way: strings as they are, whole non-negative numbers as
 * integers, other numbers with six decimals, booleans as words, objects and lists as base64 JSON.
 * Undefined when there is nothing to send.
 */
export function claimHeaderValue(value: unknown): string | undefined {
  switch (typeof value) {
    case 'string':
      return value === '' ? undefined : value;
    case 'number':
      return Number.isInteger(value) && value >= 0 && value < 2 ** 64 ? BigInt(value).toString() : value.toFixed(6);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object':
      return value === null ? undefined : Buffer.from(JSON.stringify(value)).toString('base64');
    default:
      return undefined;
  }
}

/** `normalize_payload_in_metadata`: space-delimited string claims (e.g. `scope`) become lists. */
export function normalizePayload(payload: Record<string, unknown>, spaceDelimited: readonly string[]): Record<string, unknown> {
  if (spaceDelimited.length === 0) return payload;
  // A remembered token's payload is frozen: its normalized form is worked out once, frozen too.
  if (!Object.isFrozen(payload)) return normalizedCopy(payload, spaceDelimited);
  const known = normalizedPayloads.get(payload);
  if (known?.claims === spaceDelimited) return known.normalized;
  const normalized = Object.freeze(normalizedCopy(payload, spaceDelimited));
  normalizedPayloads.set(payload, { claims: spaceDelimited, normalized });
  return normalized;
}

const normalizedPayloads = new WeakMap<object, { claims: readonly string[]; normalized: Record<string, unknown> }>();

function normalizedCopy(payload: Record<string, unknown>, spaceDelimited: readonly string[]): Record<string, unknown> {
  const copy: Record<string, unknown> = {};
  for (const k in payload) copy[k] = payload[k];
  for (const claim of spaceDelimited) {
    const value = payload[claim];
    if (typeof value === 'string') copy[claim] = Object.freeze(value.split(' ').filter((part) => part !== ''));
  }
  return copy;
}

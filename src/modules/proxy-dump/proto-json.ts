/**
 * The proxy writes its dump with snake_case field names; the reference prints the parts it
 * selects in proto3 JSON (lowerCamelCase). Map and Struct keys are data, not field names, so
 * they are kept.
 */
/** map<string, Struct> and map<string, string>: kept whole. */
const STRUCT_MAPS = new Set(['filter_metadata', 'key_values']);
/** map<string, message>: keys kept, values converted. */
const MESSAGE_MAPS = new Set(['typed_filter_metadata', 'typed_per_filter_config', 'policies']);

const camel = (key: string): string => key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export function toProtoJson(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(toProtoJson);
  if (!isObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    if (key.startsWith('@')) out[key] = v;
    else if (STRUCT_MAPS.has(key)) out[camel(key)] = v;
    else if (MESSAGE_MAPS.has(key) && isObject(v)) out[camel(key)] = Object.fromEntries(Object.entries(v).map(([k, e]) => [k, toProtoJson(e)]));
    else if (key === 'metadata' && isObject(v) && !isMetadataMessage(v)) out[key] = v; // node metadata: a Struct
    else out[camel(key)] = toProtoJson(v);
  }
  return out;
}

/** envoy.config.core.v3.Metadata, as opposed to a Struct also named `metadata`. */
function isMetadataMessage(v: Record<string, unknown>): boolean {
  const keys = Object.keys(v);
  return keys.length > 0 && keys.every((k) => k === 'filter_metadata' || k === 'typed_filter_metadata');
}

/** google.protobuf.Struct / Value in protobufjs object form → plain JSON values. */
export function structToJson(struct: unknown): Record<string, unknown> {
  const fields = (struct as { fields?: Record<string, unknown> } | undefined)?.fields ?? {};
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(fields)) out[k] = valueToJson(v);
  return out;
}

const VALUE_KINDS = ['string_value', 'number_value', 'bool_value', 'struct_value', 'list_value'] as const;

function valueToJson(v: unknown): unknown {
  // Decoded with `oneofs: true`, `kind` names the member that is set; without it (the proxy's
  // decoding), the member present is the one.
  const value = (v ?? {}) as Record<string, unknown>;
  const kind = (value.kind as string | undefined) ?? VALUE_KINDS.find((k) => value[k] !== undefined);
  switch (kind) {
    case 'string_value':
    case 'number_value':
    case 'bool_value':
      return value[kind];
    case 'struct_value':
      return structToJson(value.struct_value);
    case 'list_value':
      return ((value.list_value as { values?: unknown[] })?.values ?? []).map(valueToJson);
    default:
      return null;
  }
}

/** Plain JSON → google.protobuf.Struct object form, for generated metadata. */
export function jsonToStruct(obj: Record<string, unknown>): { fields: Record<string, unknown> } {
  const fields: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) fields[k] = jsonToValue(v);
  return { fields };
}

export function jsonToValue(v: unknown): Record<string, unknown> {
  if (v === null || v === undefined) return { null_value: 'NULL_VALUE' };
  if (typeof v === 'string') return { string_value: v };
  if (typeof v === 'number') return { number_value: v };
  if (typeof v === 'boolean') return { bool_value: v };
  if (Array.isArray(v)) return { list_value: { values: v.map(jsonToValue) } };
  return { struct_value: jsonToStruct(v as Record<string, unknown>) };
}

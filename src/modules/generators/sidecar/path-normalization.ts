import { PATH_NORMALIZATION_MODES } from '../../mesh-config/values';
export { DEFAULT_PATH_NORMALIZATION, PATH_NORMALIZATION_MODES, PathNormalizationMode } from '../../mesh-config/values';

/**
 * Mesh config `pathNormalization.normalization` → the HttpConnectionManager fields that make
 * Envoy (and the built-in proxy, which reads the same fields) normalize request paths before
 * RBAC and routing, as the incumbent sets them:
 *
 * | mode                       | normalize_path | merge_slashes | path_with_escaped_slashes_action |
 * |----------------------------|----------------|---------------|----------------------------------|
 * | NONE                       | false          | -             | KEEP_UNCHANGED                   |
 * | BASE (default), DEFAULT    | true           | -             | KEEP_UNCHANGED                   |
 * | MERGE_SLASHES              | true           | true          | KEEP_UNCHANGED                   |
 * | DECODE_AND_MERGE_SLASHES   | true           | true          | UNESCAPE_AND_FORWARD             |
 *
 * The modes are the mesh config's (mesh-config/values.ts); an unknown one throws naming the field.
 */
export function pathNormalizationFields(mode: string): Record<string, unknown> {
  switch (mode) {
    case 'NONE':
      return { normalize_path: { value: false }, path_with_escaped_slashes_action: 'KEEP_UNCHANGED' };
    case 'BASE':
    case 'DEFAULT':
      return { normalize_path: { value: true }, path_with_escaped_slashes_action: 'KEEP_UNCHANGED' };
    case 'MERGE_SLASHES':
      return { normalize_path: { value: true }, merge_slashes: true, path_with_escaped_slashes_action: 'KEEP_UNCHANGED' };
    case 'DECODE_AND_MERGE_SLASHES':
      return { normalize_path: { value: true }, merge_slashes: true, path_with_escaped_slashes_action: 'UNESCAPE_AND_FORWARD' };
    default:
      throw new Error(`mesh config pathNormalization.normalization: unknown mode ${JSON.stringify(mode)} (one of ${PATH_NORMALIZATION_MODES.join(', ')})`);
  }
}

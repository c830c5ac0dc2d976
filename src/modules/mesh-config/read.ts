import { MeshConfigError } from './fields';
import { MESH_CONFIG_MAX_BYTES, mergeMeshConfig, parseMeshConfigLayer } from './parse';
import { DEFAULT_MESH_CONFIG, MeshConfigValues } from './values';
import { readFileState } from './watched-file';

/**
 * Reads a mesh config file once (the agent at start, `meshctl` commands): a missing file means
 * the defaults (the flags' default paths usually do not exist); anything else that cannot be
 * read or used is a MeshConfigError naming the file and the field.
 */
export function readMeshConfigFile(file: string, flag = '--meshConfig'): { values: MeshConfigValues; warnings: string[] } {
  const where = `${flag} ${file}`;
  const state = readFileState(file, MESH_CONFIG_MAX_BYTES);
  if (state.kind === 'missing') return { values: DEFAULT_MESH_CONFIG, warnings: [] };
  if (state.kind === 'unreadable') throw new MeshConfigError(`${where}: ${state.message}`);
  const { layer, warnings } = parseMeshConfigLayer(state.text, where);
  return { values: mergeMeshConfig(DEFAULT_MESH_CONFIG, layer), warnings };
}

import * as fs from 'node:fs/promises';
import * as path from 'node:path';

/** The file endings a container runtime reads network configs from (libcni's ConfFiles). */
export const CNI_CONFIG_EXTENSIONS: readonly string[] = ['.conf', '.conflist', '.json'];

/**
 * The network config files of `dir` in the runtime's priority order: regular files with a CNI
 * extension, sorted by name (the runtime uses the first valid one).
 * @throws the fs error (ENOENT when the directory does not exist).
 */
export async function cniConfigFiles(dir: string): Promise<string[]> {
  const entries = await fs.readdir(dir, { withFileTypes: true });
  return entries
    .filter((e) => (e.isFile() || e.isSymbolicLink()) && CNI_CONFIG_EXTENSIONS.includes(path.extname(e.name)))
    .map((e) => e.name)
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** `x.conf` ↔ `x.conflist`: where a config named by the user may be after it was (or before it is) turned into a list. */
export function alternateConfigName(name: string): string | undefined {
  if (name.endsWith('.conf')) return name + 'list';
  if (name.endsWith('.conflist')) return name.slice(0, -'list'.length);
  return undefined;
}

/** The `.conflist` a single-plugin config file becomes once the mesh plug-in is chained to it. */
export function conflistNameFor(name: string): string {
  return path.extname(name) === '.conflist' ? name : name.slice(0, name.length - path.extname(name).length) + '.conflist';
}

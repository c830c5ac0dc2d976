import * as fs from 'node:fs';
import * as path from 'node:path';

const CONFIG_FILE = /\.(ya?ml|json)$/i;

/** Whether a directory entry's name is one a listing reads as config (*.yaml, *.yml, *.json). */
export function isConfigFileName(name: string): boolean {
  return CONFIG_FILE.test(name);
}

/** Hidden entries (editors' scratch files, a volume mount's `..data`) are never listed, nor what is under them. */
export function isHiddenName(name: string): boolean {
  return name.startsWith('.');
}

export interface ConfigFileListing {
  /** Sorted, so results are stable. */
  files: string[];
  /** Subdirectories that could not be listed (permissions, say): their files are unknown, not gone. */
  unreadableDirs: { dir: string; message: string }[];
}

/**
 * The config files a path names: the file itself, or every *.yaml|*.yml|*.json below a
 * directory (recursively). Hidden entries are skipped, as editors and orchestrator volume
 * mounts keep their scratch files there. Only the target itself failing is an error: a
 * subdirectory removed while being listed is skipped, one that cannot be read is reported.
 * What the entries are (FIFOs, sockets, symlinks) is for the reader to find out.
 */
export async function listConfigFiles(target: string): Promise<ConfigFileListing> {
  const stat = await fs.promises.stat(target);
  const listing: ConfigFileListing = { files: [], unreadableDirs: [] };
  if (!stat.isDirectory()) {
    listing.files.push(target);
    return listing;
  }
  const walk = async (dir: string): Promise<void> => {
    let entries: fs.Dirent[];
    try {
      entries = await fs.promises.readdir(dir, { withFileTypes: true });
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      if (dir === target) throw err;
      if (e.code !== 'ENOENT') listing.unreadableDirs.push({ dir, message: e.message });
      return;
    }
    for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      if (isHiddenName(entry.name)) continue;
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) await walk(full);
      else if (isConfigFileName(entry.name)) listing.files.push(full);
    }
  };
  await walk(target);
  return listing;
}

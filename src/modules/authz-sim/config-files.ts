/**
 * Mesh resources from `-f` files and directories, read as `meshctl validate` and the daemon's
 * `--configDir` read them (regular files only, the size limit, the same parser and checks).
 * Any problem stops the simulation with the file and field named: a policy that would be
 * refused cannot be simulated.
 */
import { ConfigFileLimits, ConfigResource, formatIssue, KindRegistry, listConfigFiles, parseConfigBytes, readConfigFile, resourceKey } from '../config';
import { ConfigSnapshot } from '../config/store';
import { usage } from './request';

export async function readConfigFiles(targets: readonly string[], kinds: KindRegistry, limits: ConfigFileLimits): Promise<ConfigResource[]> {
  const out: ConfigResource[] = [];
  for (const target of targets) {
    const listing = await listConfigFiles(target).catch((err: NodeJS.ErrnoException) => {
      throw usage(`-f ${target}: ${err.code === 'ENOENT' ? 'no such file or directory' : err.message}`);
    });
    if (listing.unreadableDirs.length > 0) throw usage(`-f ${target}: cannot list ${listing.unreadableDirs[0].dir}: ${listing.unreadableDirs[0].message}`);
    if (listing.files.length === 0) throw usage(`-f ${target}: no *.yaml, *.yml or *.json files found`);
    for (const file of listing.files) {
      const read = await readConfigFile(file, limits.maxBytes);
      if (read.kind !== 'bytes') throw usage(`${file}: ${read.kind === 'gone' ? 'removed while being read' : read.message}`);
      const result = parseConfigBytes(file, read.bytes, kinds, limits);
      if (result.issues.length > 0) throw usage(formatIssue(result.issues[0]) + (result.issues.length > 1 ? ` (and ${result.issues.length - 1} more problems)` : ''));
      out.push(...result.resources.map((r) => r.resource));
    }
  }
  return out;
}

/**
 * `files` over `base`: a file's object replaces the object of the same kind, namespace and
 * name, others are added (a pending change tried against what runs). Each kind stays sorted
 * by `namespace/name`, as the daemon's snapshots are.
 */
export function overlay(base: ConfigSnapshot, files: readonly ConfigResource[]): ConfigSnapshot {
  const byKind = new Map<string, Map<string, ConfigResource>>();
  for (const [kind, list] of base) byKind.set(kind, new Map(list.map((r) => [resourceKey(r), r])));
  for (const r of files) {
    if (!byKind.has(r.kind)) byKind.set(r.kind, new Map());
    byKind.get(r.kind)!.set(resourceKey(r), r);
  }
  const out = new Map<string, readonly ConfigResource[]>();
  for (const [kind, map] of byKind) out.set(kind, [...map.values()].sort((a, b) => cmp(`${a.metadata.namespace}/${a.metadata.name}`, `${b.metadata.namespace}/${b.metadata.name}`)));
  return out;
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Mesh resources from `-f` files and directories, read as `meshctl validate` and the daemon's
 * `--configDir` read them (regular files only, the size limit, the same parser and checks).
 * Any problem stops the simulation with the file and field named: a policy that would be
 * refused cannot be simulated.
 */
import { ConfigFileLimits, ConfigResource, formatIssue, KindRegistry, parseConfigBytes, readConfigTargets, resourceKey } from '../config';
import { ConfigSnapshot } from '../config/store';
import { usage } from './request';

export async function readConfigFiles(targets: readonly string[], kinds: KindRegistry, limits: ConfigFileLimits): Promise<ConfigResource[]> {
  const out: ConfigResource[] = [];
  for await (const item of readConfigTargets(targets, limits.maxBytes)) {
    if (item.kind === 'target-error') throw usage(`-f ${item.target}: ${item.message}`);
    if (item.kind === 'unreadable-dir') throw usage(`-f ${item.target}: cannot list ${item.dir}: ${item.message}`);
    if (item.kind === 'no-files') throw usage(`-f ${item.target}: no *.yaml, *.yml or *.json files found`);
    if (item.kind === 'unread') throw usage(`${item.file}: ${item.message}`);
    const result = parseConfigBytes(item.file, item.bytes, kinds, limits);
    if (result.issues.length > 0) throw usage(formatIssue(result.issues[0]) + (result.issues.length > 1 ? ` (and ${result.issues.length - 1} more problems)` : ''));
    out.push(...result.resources.map((r) => r.resource));
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

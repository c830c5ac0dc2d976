/**
 * `create-remote-secret --manifests <dir>`: the reader ClusterRole comes from the mesh's
 * manifests instead of the built-in rules: the first ClusterRole named `mesh-reader...` in the
 * YAML files of the directory (not recursive, files in name order).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { V1PolicyRule } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { UserError } from '../shared/user-error';
import { yamlDocumentValue } from '../shared/yaml-value';

/** Manifest files larger than this are refused rather than parsed. */
const MAX_MANIFEST_BYTES = 8 * 1024 * 1024;

export function readerRulesFrom(dir: string): V1PolicyRule[] {
  let names: string[];
  try {
    names = fs.readdirSync(dir).filter((n) => /\.ya?ml$/.test(n)).sort();
  } catch (err) {
    throw new UserError(`--manifests ${dir}: ${(err as Error).message}`);
  }
  for (const name of names) {
    const file = path.join(dir, name);
    const stat = fs.statSync(file);
    if (!stat.isFile()) continue;
    if (stat.size > MAX_MANIFEST_BYTES) throw new UserError(`${file}: larger than ${MAX_MANIFEST_BYTES} bytes`);
    for (const doc of parseAllDocuments(fs.readFileSync(file, 'utf8'))) {
      const obj = yamlDocumentValue(doc, file);
      const o = obj as { kind?: unknown; metadata?: { name?: unknown }; rules?: unknown } | null;
      if (o?.kind !== 'ClusterRole' || typeof o.metadata?.name !== 'string' || !o.metadata.name.startsWith('mesh-reader')) continue;
      if (!Array.isArray(o.rules)) throw new UserError(`${file}: ClusterRole ${o.metadata.name} has no rules list`);
      return o.rules as V1PolicyRule[];
    }
  }
  throw new UserError(`--manifests ${dir}: no ClusterRole named mesh-reader... in its YAML files`);
}

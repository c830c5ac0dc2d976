/**
 * `--manifests`/`-d` for tags: a directory of rendered manifests (YAML files, read recursively)
 * in which the revision's webhook configurations are found instead of on the cluster.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { UserError } from '../shared/user-error';
import { yamlDocumentValue } from '../shared/yaml-value';

const MAX_FILE_BYTES = 16 * 1024 * 1024;

export function readManifestsDir(dir: string): unknown[] {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(dir);
  } catch {
    throw new UserError(`--manifests ${dir}: no such directory`);
  }
  if (!stat.isDirectory()) throw new UserError(`--manifests ${dir}: not a directory`);
  const objects: unknown[] = [];
  const walk = (d: string) => {
    for (const entry of fs.readdirSync(d, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const full = path.join(d, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (/\.ya?ml$/.test(entry.name)) objects.push(...readYamlFile(full));
    }
  };
  walk(dir);
  return objects;
}

function readYamlFile(file: string): unknown[] {
  if (fs.statSync(file).size > MAX_FILE_BYTES) throw new UserError(`${file}: larger than ${MAX_FILE_BYTES} bytes`);
  const out: unknown[] = [];
  for (const doc of parseAllDocuments(fs.readFileSync(file, 'utf8'))) {
    const value = yamlDocumentValue(doc, file);
    if (value !== null && value !== undefined) out.push(value);
  }
  return out;
}

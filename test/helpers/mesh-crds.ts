import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { OrchApiServer } from './orch-api';
import { REPO_ROOT } from './run-cli';

/** Where the mesh's CustomResourceDefinitions ship. */
export const CRD_DIR = path.join(REPO_ROOT, 'manifests', 'crds');

/** Stores every CustomResourceDefinition of manifests/crds/ in `server` (as `kubectl apply -f manifests/crds/` would). */
export async function installMeshCrds(server: OrchApiServer): Promise<void> {
  for (const file of fs.readdirSync(CRD_DIR).filter((f) => f.endsWith('.yaml'))) {
    for (const doc of parseAllDocuments(fs.readFileSync(path.join(CRD_DIR, file), 'utf8'))) {
      const crd = doc.toJS() as { kind?: string } | null;
      if (crd?.kind === 'CustomResourceDefinition') await server.create(crd);
    }
  }
}

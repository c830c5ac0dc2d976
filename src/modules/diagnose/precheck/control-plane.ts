/**
 * The mesh control plane already in the cluster: its daemon Deployments in the system namespace
 * (label `app=meshd`, by revision), each with the version it runs.
 */
import type { V1Deployment } from '@kubernetes/client-node';
import { REVISION_LABEL } from '../../inject/policy';
import { OrchClient } from '../../orch';
import { listObjects } from '../orch-reads';
import { DEPLOYMENTS } from './resources';

/** The daemon's pods and Deployments carry this label (the selector `admin` uses by default). */
export const DAEMON_SELECTOR = 'app=meshd';
/** The version label of the daemon Deployment, when the install sets it. */
const VERSION_LABEL = 'app.kubernetes.io/version';

export interface InstalledControlPlane {
  name: string;
  namespace: string;
  revision: string;
  /** The version label, else the tag of the first container's image; '' when neither says. */
  version: string;
}

function versionOf(d: V1Deployment): string {
  const label = d.metadata?.labels?.[VERSION_LABEL];
  if (label) return label;
  const image = d.spec?.template?.spec?.containers?.[0]?.image ?? '';
  const tag = /:([^:/@]+)(?:@.*)?$/.exec(image);
  return tag ? tag[1] : '';
}

/** The daemon Deployments of `revision` ('' for every revision), by name. */
export async function installedControlPlanes(client: OrchClient, meshNamespace: string, revision: string): Promise<InstalledControlPlane[]> {
  const deployments = await listObjects<V1Deployment>(client, DEPLOYMENTS, meshNamespace, { labelSelector: DAEMON_SELECTOR });
  return deployments
    .map((d) => ({ name: d.metadata?.name ?? '', namespace: d.metadata?.namespace ?? meshNamespace, revision: d.metadata?.labels?.[REVISION_LABEL] || 'default', version: versionOf(d) }))
    .filter((d) => !revision || d.revision === revision)
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

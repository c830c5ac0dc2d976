import { inject, injectable } from 'inversify';
import { OrchClient } from '../../orch';
import { MESH_INSTALLED } from '../messages/catalogue';
import { Message, message, sortedUnique } from '../messages/message';
import { checkConflicts } from './conflicts';
import { installedControlPlanes } from './control-plane';
import { checkOrchVersion } from './orch-version';
import { checkInstallPermissions } from './permissions';
import { checkPods } from './pods';
import { checkUpgrade, parseFromVersion } from './upgrade';

export interface PrecheckOptions {
  meshNamespace: string;
  /** `-n`: the namespace whose workloads are checked; '' for all but the system namespaces. */
  namespace: string;
  /** `-r`: only this control plane revision counts; '' for any. */
  revision: string;
  /** `--from-version`, when upgrading. */
  fromVersion?: string;
  /** `--skip-controlplane`: no orchestrator version, permission, installed-mesh or conflict checks. */
  skipControlPlane: boolean;
  /** The version this meshctl installs. */
  meshVersion: string;
}

/** `meshctl x precheck`: the messages about installing or upgrading the mesh in the cluster, errors first. */
@injectable()
export class Precheck {
  constructor(@inject(OrchClient) private readonly client: OrchClient) {}

  async run(options: PrecheckOptions): Promise<Message[]> {
    const { client } = this;
    if (options.fromVersion) parseFromVersion(options.fromVersion);
    const messages: Message[] = [];
    const installed = !options.skipControlPlane || options.fromVersion ? await installedControlPlanes(client, options.meshNamespace, options.revision) : [];
    if (!options.skipControlPlane) {
      const [version, permissions, conflicts] = await Promise.all([checkOrchVersion(client), checkInstallPermissions(client, options.meshNamespace), checkConflicts(client)]);
      messages.push(...version, ...permissions, ...conflicts);
      if (installed.length) {
        const what = installed.map((cp) => `revision ${cp.revision}${cp.version ? `, version ${cp.version}` : ''}`).join('; ');
        messages.push(message(MESH_INSTALLED, 'Cluster', options.meshNamespace, what));
      }
    }
    if (options.fromVersion) {
      messages.push(...checkUpgrade({ fromVersion: options.fromVersion, targetVersion: options.meshVersion, installed, meshNamespace: options.meshNamespace, revision: options.revision }));
    }
    messages.push(...(await checkPods(client, options.namespace)));
    return sortedUnique(messages);
  }
}

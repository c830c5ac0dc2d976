import { command, MeshCommand, stringFlag } from '../../src/modules/cli';
import { clustersTable, daemonPods, fetchClusters, PodRequest } from '../../src/modules/diagnose';
import { MeshctlOrchFlags } from '../../src/modules/orch-access';
import { withOrchAccess } from './orch-access-scope';

@command({
  program: 'meshctl',
  path: 'remote-clusters',
  summary: 'List the remote clusters each control-plane daemon is connected to',
  flags: { revision: stringFlag('control plane revision to ask', { char: 'r' }) },
})
export class RemoteClusters extends MeshCommand {
  async run(): Promise<void> {
    const { flags } = await this.parse(RemoteClusters);
    const table = await withOrchAccess(
      this.scope,
      flags as MeshctlOrchFlags,
      async (access) => {
        const request: PodRequest = (pod, port, req) => access.forwarder.request(pod, port, req);
        const pods = await daemonPods(access.client, flags.meshNamespace, flags.revision ?? '');
        return clustersTable(await Promise.all(pods.map((pod) => fetchClusters(request, pod))));
      },
      'asking the control plane for its clusters',
    );
    process.stdout.write(table);
  }
}

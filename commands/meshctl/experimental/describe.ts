import { Args } from '@oclif/core';
import { boolFlag, command, GroupCommand, MeshCommand } from '../../../src/modules/cli';
import { PodDescriber } from '../../../src/modules/diagnose';
import { OrchClientOptionsToken } from '../../../src/modules/orch';
import { MeshctlOrchFlags, meshctlOrchOptions } from '../../../src/modules/orch-access';
import { withOrchAccess } from '../orch-access-scope';

@command({
  program: 'meshctl',
  path: 'experimental describe',
  aliases: ['des'],
  summary: 'Describe the mesh configuration affecting a resource',
  group: true,
})
export class ExperimentalDescribe extends GroupCommand {}

@command({
  program: 'meshctl',
  path: 'experimental describe pod',
  aliases: ['po'],
  summary: 'Report the configuration objects affecting a pod',
  usage: 'experimental describe pod <pod>',
  flags: { ignoreUnmeshed: boolFlag('do not report that the pod is not in the mesh') },
  args: { pod: Args.string({ required: true, description: 'pod name, optionally .<namespace>' }) },
})
export class ExperimentalDescribePod extends MeshCommand {
  async run(): Promise<void> {
    const { flags, args } = await this.parse(ExperimentalDescribePod);
    const result = await withOrchAccess(
      this.scope,
      flags as MeshctlOrchFlags,
      async (access) => {
        const viewerNamespace = access.namespace(flags.namespace);
        const pod = await access.resolvePod(args.pod, viewerNamespace);
        // The same client as the access's: the orchestrator client is one per process.
        const describer = this.scope.resolve(PodDescriber, [[OrchClientOptionsToken, meshctlOrchOptions(flags as MeshctlOrchFlags)]]);
        return describer.describe(pod, { viewerNamespace, meshNamespace: flags.meshNamespace, ignoreUnmeshed: flags.ignoreUnmeshed });
      },
      'reading the pod and the mesh configuration',
    );
    if (result.text) process.stdout.write(result.text);
    if (result.error) this.fail(result.error);
  }
}

import { command, MeshCommand, stringFlag } from '../../../src/modules/cli';
import { InjectionChecker, parseLabelPairs, webhookTable } from '../../../src/modules/diagnose';
import { OrchClientOptionsToken } from '../../../src/modules/orch';
import { MeshctlOrchFlags, meshctlOrchOptions } from '../../../src/modules/orch-access';
import { withOrchAccess } from '../orch-access-scope';
import { TARGET_USAGE, targetArgs } from '../target-arg';

@command({
  program: 'meshctl',
  path: 'experimental check-inject',
  summary: 'Tell whether a pod can be, or will be, injected with the sidecar',
  usage: `experimental check-inject ${TARGET_USAGE}`,
  flags: { labels: stringFlag('pod labels to check against instead of a pod, as key=value,...', { char: 'l' }) },
  args: targetArgs,
})
export class ExperimentalCheckInject extends MeshCommand {
  async run(): Promise<void> {
    const { flags, args } = await this.parse(ExperimentalCheckInject);
    if (args.target === undefined && !flags.labels) this.fail(`check-inject requires a pod, ${TARGET_USAGE}, or --labels`);
    if (args.target !== undefined && flags.labels) this.fail('check-inject takes a pod or --labels, not both');
    const labels = flags.labels ? parseLabelPairs(flags.labels) : undefined;
    const results = await withOrchAccess(
      this.scope,
      flags as MeshctlOrchFlags,
      async (access) => {
        // The same client as the access's: the orchestrator client is one per process.
        const checker = this.scope.resolve(InjectionChecker, [[OrchClientOptionsToken, meshctlOrchOptions(flags as MeshctlOrchFlags)]]);
        const namespace = access.namespace(flags.namespace);
        return labels ? checker.check(namespace, labels) : checker.checkPod(await access.resolvePod(args.target!, namespace));
      },
      'reading the injection webhooks',
    );
    if (results.length === 0) this.fail('no mesh injection webhooks are present (no MutatingWebhookConfiguration has a webhook named ...mesh.io)');
    process.stdout.write(webhookTable(results, process.stdout.isTTY === true));
    if (results.filter((r) => r.injected).length > 1) this.fail('multiple webhooks will inject, which can lead to errors');
  }
}

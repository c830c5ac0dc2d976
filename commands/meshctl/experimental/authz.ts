import { command, GroupCommand, MeshCommand, stringFlag } from '../../../src/modules/cli';
import { ADMIN_PATHS, authzCheckTable, liveConfigDump, readConfigDump, resolveProxyPod } from '../../../src/modules/proxy-dump';
import { MeshctlOrchFlags } from '../../../src/modules/orch-access';
import { withOrchAccess } from '../orch-access-scope';

/** The proxy admin port (spec/03 Limits); this command has no flag to move it, as in the reference. */
const PROXY_ADMIN_PORT = 15000;
import { TARGET_USAGE, targetArgs } from '../target-arg';

export { ExperimentalAuthzSimulate } from './authz-simulate';

@command({
  program: 'meshctl',
  path: 'experimental authz',
  // Also the top-level `authz` group (spec/03: "alias of the experimental authz group").
  topLevelAliases: ['authz'],
  summary: 'Inspect the authorization policies applied to workloads',
  group: true,
})
export class ExperimentalAuthz extends GroupCommand {}

@command({
  program: 'meshctl',
  path: 'experimental authz check',
  summary: "Show the authorization policies (mesh, namespace and workload level) merged into a pod's proxy config",
  usage: `experimental authz check ${TARGET_USAGE}`,
  flags: { file: stringFlag('read this proxy config dump (JSON or YAML) instead of asking the proxy', { char: 'f' }) },
  args: targetArgs,
})
export class ExperimentalAuthzCheck extends MeshCommand {
  async run(): Promise<void> {
    const { flags, args } = await this.parse(ExperimentalAuthzCheck);
    if (args.target === undefined && !flags.file) this.fail('check requires pod name or --file parameter');
    if (args.target !== undefined && flags.file) this.fail('check takes a pod name or --file, not both');
    if (flags.file) {
      this.write(authzCheckTable(readConfigDump(flags.file, { allowYaml: true })));
      return;
    }
    const global = flags as unknown as MeshctlOrchFlags & { namespace?: string };
    const dump = await withOrchAccess(this.scope, global, async (access) => {
      const pod = await resolveProxyPod(access, args.target!, global.namespace, PROXY_ADMIN_PORT);
      return liveConfigDump(pod.call, ADMIN_PATHS.authz, pod.source);
    }, `reading the proxy of ${args.target} through the orchestrator API`);
    this.write(authzCheckTable(dump));
  }
}

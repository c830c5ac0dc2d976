import { command, GroupCommand, MeshCommand, stringFlag } from '../../../src/modules/cli';
import { authzCheckTable, readConfigDump } from '../../../src/modules/proxy-dump';
import { TARGET_USAGE, targetArgs } from '../target-arg';

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
    const { flags } = await this.parse(ExperimentalAuthzCheck);
    // Reading a live proxy needs the orchestrator API (port-forward), which is not built yet.
    if (!flags.file) this.fail(`${this.commandLine} without -f needs the orchestrator API to reach the proxy, which is not built yet; pass a saved config dump with -f`);
    this.write(authzCheckTable(readConfigDump(flags.file, { allowYaml: true })));
  }
}

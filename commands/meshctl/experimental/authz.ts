import { command, GroupCommand, NotYetImplementedCommand, stringFlag } from '../../../src/modules/cli';
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
  flags: { file: stringFlag('read this proxy config dump (JSON) instead of asking the proxy', { char: 'f' }) },
  args: targetArgs,
})
export class ExperimentalAuthzCheck extends NotYetImplementedCommand {}

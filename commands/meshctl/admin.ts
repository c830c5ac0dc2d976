import { Args } from '@oclif/core';
import { adminLog, ScopeOutputFormat } from '../../src/modules/admin';
import { boolFlag, command, GroupCommand, MeshCommand, stringFlag, terminalProgress, uint16Flag } from '../../src/modules/cli';
import { OrchClientOptionsToken } from '../../src/modules/orch';
import { meshctlOrchOptions, MeshctlOrchFlags, OrchAccess } from '../../src/modules/orch-access';
import { outputFormatFlag } from './flag-types';

/** The `admin` group's flag; its subcommands inherit it (a cobra persistent flag). */
const adminFlags = {
  selector: stringFlag('label selector picking the control-plane daemon pods', { char: 'l', default: 'app=meshd' }),
};

@command({
  program: 'meshctl',
  path: 'admin',
  aliases: ['meshd'],
  summary: 'Manage control plane (meshd) configuration',
  flags: adminFlags,
  group: true,
})
export class Admin extends GroupCommand {}

@command({
  program: 'meshctl',
  path: 'admin log',
  aliases: ['l'],
  summary: 'Show or change the logging levels of control-plane daemons',
  usage: [
    'admin log [<pod-name>]|[-r|--revision <revision>] [--level <scope>:<level>,...]',
    '[--stack-trace-level <scope>:<level>,...] [--reset] [-o json|yaml|short]',
  ].join(' '),
  flags: {
    ...adminFlags,
    ctrlz_port: uint16Flag('introspection (ControlZ) port of the daemon', { default: 9876 }),
    level: stringFlag('levels to set, as <scope>:<level>,...; levels are none, error, warn, info, debug'),
    output: outputFormatFlag(['json', 'yaml', 'short'], 'short'),
    reset: boolFlag('reset every scope to the info level'),
    revision: stringFlag('control plane revision whose daemons to address', { char: 'r' }),
    'stack-trace-level': stringFlag('stack trace levels to set, as <scope>:<level>,...'),
  },
  args: {
    'pod-name': Args.string({ required: false, description: 'control-plane daemon pod; all matching --selector when absent' }),
  },
})
export class AdminLog extends MeshCommand {
  async run(): Promise<void> {
    const { flags, args } = await this.parse(AdminLog);
    const access = this.scope.resolve(OrchAccess, [[OrchClientOptionsToken, meshctlOrchOptions(flags as MeshctlOrchFlags)]]);
    // A spinner on a terminal while pods are looked up and their ControlZ ports forwarded.
    const progress = terminalProgress('looking for daemon pods...');
    try {
      const out = await adminLog(access, {
        pod: args['pod-name'],
        // The daemons live in the mesh namespace unless -n says otherwise, as with the incumbent.
        namespace: flags.namespace || flags.meshNamespace,
        selector: flags.selector,
        revision: flags.revision,
        ctrlzPort: flags.ctrlz_port,
        level: flags.level,
        stackTraceLevel: flags['stack-trace-level'],
        reset: flags.reset ?? false,
        output: flags.output as ScopeOutputFormat,
        progress: (message) => progress.update(message),
      });
      progress.done();
      process.stdout.write(out);
    } finally {
      progress.done();
      await access.close();
    }
  }
}

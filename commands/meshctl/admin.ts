import { Args } from '@oclif/core';
import { boolFlag, command, GroupCommand, NotYetImplementedCommand, stringFlag, uint16Flag } from '../../src/modules/cli';
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
export class AdminLog extends NotYetImplementedCommand {}

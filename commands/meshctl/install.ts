import { boolFlag, command, durationFlag, GroupCommand, NotYetImplementedCommand, stringFlag } from '../../src/modules/cli';
import { installSetFlags, pickFlags } from './flag-groups';

/** Flags of `install`, shared with `manifest install` ("same as install"). */
const installFlags = {
  ...installSetFlags,
  'readiness-timeout': durationFlag('how long to wait for the installed resources to become ready', { default: '5m0s' }),
  'skip-confirmation': boolFlag('do not ask for confirmation', { char: 'y' }),
  verify: boolFlag('verify the installation after applying it'),
};

// `upgrade` is an alias of install (spec table), not a command of its own.
@command({
  program: 'meshctl',
  path: 'install',
  aliases: ['apply', 'upgrade'],
  summary: 'Generate the install manifest and apply it to the cluster',
  flags: installFlags,
})
export class Install extends NotYetImplementedCommand {}

@command({
  program: 'meshctl',
  path: 'manifest',
  summary: 'Commands that render and apply the install manifest',
  group: true,
})
export class Manifest extends GroupCommand {}

@command({
  program: 'meshctl',
  path: 'manifest generate',
  summary: 'Print the install manifest',
  flags: {
    ...installSetFlags,
    'cluster-specific': boolFlag('read the current cluster to render values specific to it'),
  },
})
export class ManifestGenerate extends NotYetImplementedCommand {}

@command({
  program: 'meshctl',
  path: 'manifest install',
  aliases: ['apply'],
  summary: 'Generate the install manifest and apply it to the cluster (as install)',
  flags: installFlags,
})
export class ManifestInstall extends NotYetImplementedCommand {}

@command({
  program: 'meshctl',
  path: 'manifest translate',
  summary: 'Translate an operator resource into chart values',
  flags: {
    ...pickFlags(installSetFlags, 'filename', 'manifests', 'revision', 'set', 'dry-run'),
    output: stringFlag('where to write the output', { char: 'o' }),
  },
})
export class ManifestTranslate extends NotYetImplementedCommand {}

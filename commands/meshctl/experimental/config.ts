import { command, GroupCommand } from '../../../src/modules/cli';

/** Parent of `experimental config list` (the lead's command). */
@command({
  program: 'meshctl',
  path: 'experimental config',
  summary: 'Inspect the settings of the mesh programs and their defaults',
  group: true,
})
export class ExperimentalConfig extends GroupCommand {}

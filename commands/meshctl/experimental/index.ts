import { command, GroupCommand } from '../../../src/modules/cli';

@command({
  program: 'meshctl',
  path: 'experimental',
  aliases: ['x'],
  summary: 'Experimental commands that may be modified or removed',
  group: true,
})
export class Experimental extends GroupCommand {}

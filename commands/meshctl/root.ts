import { command, GroupCommand } from '../../src/modules/cli';

@command({
  program: 'meshctl',
  path: '',
  summary: 'Mesh configuration command line utility: install, configure, debug and diagnose the mesh',
  group: true,
})
export class Meshctl extends GroupCommand {}

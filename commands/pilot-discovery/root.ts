import { command, GroupCommand } from '../../src/modules/cli';

@command({
  program: 'pilot-discovery',
  path: '',
  summary: 'Mesh control-plane daemon (meshd): traffic management, security and policy for the service mesh',
  group: true,
})
export class PilotDiscovery extends GroupCommand {}

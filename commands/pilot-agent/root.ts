import { command, GroupCommand } from '../../src/modules/cli';

@command({
  program: 'pilot-agent',
  path: '',
  summary: 'Mesh workload agent: bootstraps and supervises the proxy, serves its certificates and proxies xDS',
  group: true,
})
export class PilotAgent extends GroupCommand {}

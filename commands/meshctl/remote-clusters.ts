import { command, NotYetImplementedCommand, stringFlag } from '../../src/modules/cli';

@command({
  program: 'meshctl',
  path: 'remote-clusters',
  summary: 'List the remote clusters each control-plane daemon is connected to',
  flags: { revision: stringFlag('control plane revision to ask', { char: 'r' }) },
})
export class RemoteClusters extends NotYetImplementedCommand {}

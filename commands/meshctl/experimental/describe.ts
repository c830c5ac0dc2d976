import { Args } from '@oclif/core';
import { boolFlag, command, GroupCommand, NotYetImplementedCommand } from '../../../src/modules/cli';

@command({
  program: 'meshctl',
  path: 'experimental describe',
  aliases: ['des'],
  summary: 'Describe the mesh configuration affecting a resource',
  group: true,
})
export class ExperimentalDescribe extends GroupCommand {}

@command({
  program: 'meshctl',
  path: 'experimental describe pod',
  aliases: ['po'],
  summary: 'Report the configuration objects affecting a pod',
  usage: 'experimental describe pod <pod>',
  flags: { ignoreUnmeshed: boolFlag('do not report that the pod is not in the mesh') },
  args: { pod: Args.string({ required: true, description: 'pod name, optionally .<namespace>' }) },
})
export class ExperimentalDescribePod extends NotYetImplementedCommand {}

import { Args } from '@oclif/core';
import { command, NotYetImplementedCommand } from '../../src/modules/cli';

@command({
  program: 'pilot-discovery',
  path: 'request',
  summary: 'Makes an HTTP request to the daemon metrics/debug endpoint',
  usage: 'request <method> <path> [<body>]',
  args: {
    method: Args.string({ required: true, description: 'HTTP method' }),
    path: Args.string({ required: true, description: 'path on the metrics/debug endpoint' }),
    body: Args.string({ required: false, description: 'request body' }),
  },
})
export class Request extends NotYetImplementedCommand {}

import { command, RequestCommandBase, requestArgs } from '../../src/modules/cli';

/** The daemon serves metrics and debug pages on its monitoring port (spec/01: 15014). */
const MONITORING_URL = 'http://127.0.0.1:15014';

@command({
  program: 'pilot-discovery',
  path: 'request',
  summary: 'Makes an HTTP request to the daemon metrics/debug endpoint',
  usage: 'request <method> <path> [<body>]',
  args: requestArgs,
})
export class Request extends RequestCommandBase {
  protected baseUrl(): string {
    return MONITORING_URL;
  }
}

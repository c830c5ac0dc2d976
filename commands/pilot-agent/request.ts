import { command, intFlag, RequestCommandBase, requestArgs } from '../../src/modules/cli';

@command({
  program: 'pilot-agent',
  path: 'request',
  summary: 'Makes an HTTP request to the proxy admin API',
  usage: 'request <method> <path> [<body>]',
  args: requestArgs,
  flags: { 'debug-port': intFlag('set the port to request the proxy admin API on', { default: 15000 }) },
})
export class Request extends RequestCommandBase {
  protected baseUrl(flags: Record<string, unknown>): string {
    return `http://127.0.0.1:${flags['debug-port']}`;
  }
}

import { Args, Command } from '@oclif/core';
import { httpRequest } from './http-request';
import { MeshCommand } from './mesh-command';

export const requestArgs = {
  method: Args.string({ required: true, description: 'HTTP method, e.g. GET or POST' }),
  path: Args.string({ required: true, description: 'path, e.g. /config_dump' }),
  body: Args.string({ required: false, description: 'request body' }),
};

/**
 * `request <method> <path> [<body>]`: one HTTP request to a local admin or debug port,
 * printing the response body; a non-2xx answer is an error naming the status.
 */
export abstract class RequestCommandBase extends MeshCommand {
  protected abstract baseUrl(flags: Record<string, unknown>): string;

  async run(): Promise<void> {
    const { args, flags } = await this.parse(this.constructor as Command.Class);
    const path = String(args.path).startsWith('/') ? String(args.path) : `/${args.path}`;
    const url = this.baseUrl(flags) + path;
    let result;
    try {
      result = await httpRequest(String(args.method), url, args.body as string | undefined);
    } catch (err) {
      this.fail(`${String(args.method).toUpperCase()} ${url}: ${(err as Error).message}`);
    }
    if (result.status < 200 || result.status >= 300) {
      this.fail(`${String(args.method).toUpperCase()} ${url}: status ${result.status}: ${result.body.trim()}`);
    }
    process.stdout.write(result.body);
  }
}

import { Command } from '@oclif/core';
import { command, intFlag, MeshCommand, stringFlag } from '../../src/modules/cli';
import { httpRequest } from '../../src/modules/cli/http-request';

@command({
  program: 'pilot-agent',
  path: 'wait',
  summary: 'Waits until the proxy is ready',
  flags: {
    periodMillis: intFlag('number of milliseconds to wait between attempts', { default: 500, min: 1 }),
    requestTimeoutMillis: intFlag('number of milliseconds to wait for a response', { default: 500, min: 1 }),
    timeoutSeconds: intFlag('maximum number of seconds to wait for the proxy to be ready', { default: 60, min: 0 }),
    url: stringFlag('URL to use in requests', { default: 'http://localhost:15021/healthz/ready' }),
  },
})
export class Wait extends MeshCommand {
  async run(): Promise<void> {
    const { flags } = await this.parse(this.constructor as Command.Class);
    const url = flags.url as string;
    const deadline = Date.now() + (flags.timeoutSeconds as number) * 1000;
    this.write(`Waiting for the proxy to be ready (timeout: ${flags.timeoutSeconds} seconds)...`);
    let lastError = 'no attempt made';
    for (;;) {
      try {
        const res = await httpRequest('GET', url, undefined, flags.requestTimeoutMillis as number);
        if (res.status === 200) {
          this.write('The proxy is ready.');
          return;
        }
        lastError = `HTTP status code ${res.status}`;
      } catch (err) {
        lastError = (err as Error).message;
      }
      if (Date.now() + (flags.periodMillis as number) > deadline) break;
      await new Promise((r) => setTimeout(r, flags.periodMillis as number));
    }
    this.fail(`timeout waiting for the proxy to become ready at ${url}; last error: ${lastError}`);
  }
}

/**
 * A proxyless gRPC client of the sample echo service (README, `npm start`):
 *
 *   GRPC_XDS_BOOTSTRAP=samples/grpc-bootstrap.json node dist/src/demo/echo-client.js [--calls N] [--canary] [target]
 *
 * @grpc/grpc-js-xds reads the bootstrap GRPC_XDS_BOOTSTRAP names, gets the target's listener,
 * routes, clusters and endpoints from the daemon, and calls the backends directly. Prints how
 * many calls each backend answered (`--canary` sends `x-canary: true`, which the sample routes
 * to v2); exits 1 naming the call that failed.
 */
import { register } from '@grpc/grpc-js-xds';
import { EchoClient } from './grpc-echo';

const DEFAULT_TARGET = 'xds:///echo.foo.svc.cluster.local:7070';
// The first call waits for the daemon's answers; later ones only for the backend.
const FIRST_CALL_DEADLINE_MS = 10_000;
const CALL_DEADLINE_MS = 5_000;

interface Options {
  target: string;
  calls: number;
  canary: boolean;
}

function parseArgs(args: string[]): Options {
  const options: Options = { target: DEFAULT_TARGET, calls: 10, canary: false };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === '--canary') options.canary = true;
    else if (arg === '--calls') {
      const n = Number(args[++i]);
      if (!Number.isInteger(n) || n < 1) throw new Error(`--calls needs a whole number of at least 1, got ${JSON.stringify(args[i] ?? '')}`);
      options.calls = n;
    } else if (arg.startsWith('-')) throw new Error(`unknown flag ${arg} (usage: echo-client [--calls N] [--canary] [target])`);
    else options.target = arg;
  }
  return options;
}

async function main(): Promise<void> {
  const options = parseArgs(process.argv.slice(2));
  register();
  const client = new EchoClient(options.target);
  const headers: Record<string, string> = options.canary ? { 'x-canary': 'true' } : {};
  const counts: Record<string, number> = {};
  try {
    for (let i = 0; i < options.calls; i++) {
      const server = await client.call(i === 0 ? FIRST_CALL_DEADLINE_MS : CALL_DEADLINE_MS, headers).catch((err: Error) => {
        const hint = i === 0 ? ` (is GRPC_XDS_BOOTSTRAP the path of a bootstrap file such as samples/grpc-bootstrap.json, and the daemon it names running?)` : '';
        throw new Error(`call ${i + 1} of ${options.calls} to ${options.target} failed: ${err.message}${hint}`);
      });
      counts[server] = (counts[server] ?? 0) + 1;
    }
  } finally {
    client.close();
  }
  const answered = Object.entries(counts).sort(([a], [b]) => a.localeCompare(b)).map(([server, n]) => `${server} ${n}`);
  console.log(`${options.calls} call${options.calls === 1 ? '' : 's'} to ${options.target}${options.canary ? ' (x-canary: true)' : ''}: ${answered.join(', ')}`);
}

// The xDS client keeps its stream to the daemon open after the channel closes, so the script
// ends itself once it has answered.
main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(`echo-client: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);

/**
 * What every `meshctl dashboard ...` does once it has a local port-forward to a web UI: print
 * the URL, open a browser unless `--browser=false` (none found: say so and keep serving), then
 * serve until SIGINT or SIGTERM, close the forward and return (the command exits 0).
 */
import { spawn } from 'node:child_process';
import type { EventEmitter } from 'node:events';

/** A local listener forwarding to the UI (the reach layer's LocalForward has this shape). */
export interface ServedForward {
  /** `http://localhost:<port>` when listening on localhost, else `http://<address>:<port>`. */
  readonly url: string;
  close(): Promise<void>;
}

export interface DashboardOptions {
  /** Appended to the URL: `/debug` for the daemon's debug pages; empty for a UI at its root. */
  path?: string;
  browser: boolean;
  /** Where the URL and messages go (the command's stdout). */
  out: (text: string) => void;
  /** The program that opens a URL; default the platform's (xdg-open, open, rundll32). */
  opener?: { command: string; args: (url: string) => string[] };
  /** Where SIGINT and SIGTERM arrive; default the process. */
  signals?: Pick<EventEmitter, 'once' | 'removeListener'>;
}

function platformOpener(): { command: string; args: (url: string) => string[] } {
  if (process.platform === 'darwin') return { command: 'open', args: (url) => [url] };
  if (process.platform === 'win32') return { command: 'rundll32', args: (url) => ['url.dll,FileProtocolHandler', url] };
  return { command: 'xdg-open', args: (url) => [url] };
}

/** Starts the browser on `url` without waiting for it; resolves once it started or could not. */
function openBrowser(url: string, opener: NonNullable<DashboardOptions['opener']>, out: (text: string) => void): Promise<void> {
  return new Promise((resolve) => {
    const child = spawn(opener.command, opener.args(url), { detached: true, stdio: 'ignore' });
    child.once('spawn', () => {
      child.unref();
      resolve();
    });
    child.once('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') out(`no browser opener (${opener.command}) was found; open ${url} in your browser\n`);
      else out(`Failed to open browser (${err.message}); open ${url} in your browser.\n`);
      resolve();
    });
  });
}

/** Prints the URL, opens the browser if asked, and serves until a stop signal; then closes the forward. */
export async function serveDashboard(forward: ServedForward, options: DashboardOptions): Promise<void> {
  const url = forward.url + (options.path ?? '');
  const signals = options.signals ?? process;
  const stopped = new Promise<NodeJS.Signals>((resolve) => {
    const onInt = () => done('SIGINT');
    const onTerm = () => done('SIGTERM');
    const done = (signal: NodeJS.Signals) => {
      signals.removeListener('SIGINT', onInt);
      signals.removeListener('SIGTERM', onTerm);
      resolve(signal);
    };
    signals.once('SIGINT', onInt);
    signals.once('SIGTERM', onTerm);
  });
  options.out(`${url}\n`);
  if (options.browser) await openBrowser(url, options.opener ?? platformOpener(), options.out);
  else options.out('skipping opening a browser\n');
  await stopped;
  await forward.close();
}

/**
 * The local port as the reference picks it: `--port` when given (its failure is the error),
 * else the UI's own port number when free, else any free port.
 */
export async function listenPreferring<F>(listen: (port: number) => Promise<F>, flagPort: number, uiPort: number): Promise<F> {
  if (flagPort !== 0) return listen(flagPort);
  try {
    return await listen(uiPort);
  } catch {
    return listen(0);
  }
}

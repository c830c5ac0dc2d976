/**
 * What a `meshctl dashboard ...` command does once its port-forward listens: print the URL,
 * open a browser unless `--browser=false`, serve until SIGINT or SIGTERM, then close the
 * forward so the command ends with exit 0.
 */
import { spawn } from 'node:child_process';
import type { EventEmitter } from 'node:events';

/** A local listener forwarding to a web UI (the reach layer's LocalForward). */
export interface ServedForward {
  readonly url: string;
  close(): Promise<void>;
}

export interface ServeOptions {
  browser: boolean;
  /** The command's stdout. */
  out: (text: string) => void;
  /** The programs that open a URL, tried in order; default xdg-open then open (open first on macOS). */
  openers?: readonly string[];
  /** Where SIGINT and SIGTERM arrive; default this process. */
  signals?: Pick<EventEmitter, 'once' | 'removeListener'>;
}

const OPENERS = process.platform === 'darwin' ? ['open', 'xdg-open'] : ['xdg-open', 'open'];

/** Starts the first opener there is on `url`, left running on its own; says so when there is none. */
async function openBrowser(url: string, openers: readonly string[], out: (text: string) => void): Promise<void> {
  for (const opener of openers) {
    const started = await new Promise<true | NodeJS.ErrnoException>((resolve) => {
      const child = spawn(opener, [url], { detached: true, stdio: 'ignore' });
      child.once('spawn', () => {
        child.unref();
        resolve(true);
      });
      child.once('error', (err: NodeJS.ErrnoException) => resolve(err));
    });
    if (started === true) return;
    if (started.code !== 'ENOENT') {
      out(`could not start ${opener} (${started.message}); open ${url} in your browser\n`);
      return;
    }
  }
  out(`no browser opener (${openers.join(' or ')}) was found; open ${url} in your browser\n`);
}

/** Prints the URL, opens the browser if asked, serves until a stop signal, then closes the forward. */
export async function serveDashboard(forward: ServedForward, options: ServeOptions): Promise<void> {
  const signals = options.signals ?? process;
  const stopped = new Promise<void>((resolve) => {
    const stop = () => {
      signals.removeListener('SIGINT', stop);
      signals.removeListener('SIGTERM', stop);
      resolve();
    };
    signals.once('SIGINT', stop);
    signals.once('SIGTERM', stop);
  });
  options.out(`${forward.url}\n`);
  if (options.browser) await openBrowser(forward.url, options.openers ?? OPENERS, options.out);
  await stopped;
  await forward.close();
}

/**
 * The local port as the incumbent picks it: `--port` when given (its failure is the error),
 * else the UI's own port number when that is free here, else any free port.
 */
export async function listenPreferring<F>(listen: (port: number) => Promise<F>, flagPort: number, uiPort: number): Promise<F> {
  if (flagPort !== 0) return listen(flagPort);
  try {
    return await listen(uiPort);
  } catch {
    return listen(0);
  }
}

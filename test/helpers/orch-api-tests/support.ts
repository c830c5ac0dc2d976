import * as https from 'node:https';
import * as k8s from '@kubernetes/client-node';
import type { OrchApiServer } from '../orch-api';

/** Shared pieces of the orchestrator API server's tests: raw HTTPS calls, waits, error capture. */

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json: any;
}

/** One HTTPS request to the server, trusting its CA, with its token unless `token` is given ('' for none). */
export function request(server: OrchApiServer, method: string, path: string, options: { body?: unknown; contentType?: string; accept?: string; token?: string; ca?: string } = {}): Promise<RawResponse> {
  const url = new URL(path, server.url);
  const body = options.body === undefined ? undefined : typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
  const token = options.token ?? server.token;
  return new Promise((resolve, reject) => {
    const req = https.request(
      url,
      {
        method,
        ca: options.ca ?? server.caPem,
        agent: false,
        headers: {
          ...(token ? { Authorization: `Bearer ${token}` } : {}),
          ...(body !== undefined ? { 'Content-Type': options.contentType ?? 'application/json' } : {}),
          ...(options.accept ? { Accept: options.accept } : {}),
        },
        timeout: 10_000,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => {
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${path} timed out`)));
    req.on('error', reject);
    req.end(body);
  });
}

export interface WatchLine {
  type: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  object: any;
}

/** A raw watch stream: its events as they arrive, whether it ended, and a way to close it. */
export function rawWatch(server: OrchApiServer, path: string): Promise<{ events: WatchLine[]; ended: () => boolean; close: () => void; status: number; contentType: string | undefined }> {
  const url = new URL(path, server.url);
  return new Promise((resolve, reject) => {
    const events: WatchLine[] = [];
    let ended = false;
    const req = https.request(url, { method: 'GET', ca: server.caPem, agent: false, headers: { Authorization: `Bearer ${server.token}` } }, (res) => {
      let buffer = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        let nl: number;
        while ((nl = buffer.indexOf('\n')) >= 0) {
          const line = buffer.slice(0, nl);
          buffer = buffer.slice(nl + 1);
          if (line.trim()) events.push(JSON.parse(line));
        }
      });
      res.on('end', () => (ended = true));
      res.on('close', () => (ended = true));
      resolve({ events, ended: () => ended, close: () => req.destroy(), status: res.statusCode ?? 0, contentType: res.headers['content-type'] });
    });
    req.on('error', (err) => {
      ended = true;
      if (!events.length) reject(err);
    });
    req.end();
  });
}

/** Polls until `condition` holds; fails naming `what` after `timeoutMs`. */
export async function waitUntil(what: string, condition: () => boolean | Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** The ApiException a call fails with, its body parsed. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function apiError(promise: Promise<unknown>): Promise<{ code: number; status: any }> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof k8s.ApiException) {
      const body = typeof err.body === 'string' ? JSON.parse(err.body) : err.body;
      return { code: err.code, status: body };
    }
    throw err;
  }
  throw new Error('expected the call to fail');
}

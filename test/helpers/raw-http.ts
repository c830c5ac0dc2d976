import * as net from 'node:net';

export interface RawAnswer {
  status: number;
  /** Lower-case header names; a repeated header keeps its last value. */
  headers: Record<string, string>;
  body: string;
}

/**
 * One HTTP/1.1 request written byte for byte, so nothing on the client side rewrites the
 * request target (`GET /a/../b`, `%2e`, `\`, `#` reach the server as written). The connection
 * is closed after the answer; the wait is bounded by `timeoutMs`.
 */
export function rawRequest(
  address: string,
  port: number,
  target: string,
  headers: Record<string, string> = {},
  timeoutMs = 5000,
): Promise<RawAnswer> {
  const lines = [`GET ${target} HTTP/1.1`, ...Object.entries({ connection: 'close', ...headers }).map(([k, v]) => `${k}: ${v}`)];
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: address, port }, () => socket.write(Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1')));
    const chunks: Buffer[] = [];
    socket.setTimeout(timeoutMs, () => socket.destroy(new Error(`GET ${target}: no complete answer within ${timeoutMs} ms`)));
    socket.on('data', (d: Buffer) => chunks.push(d));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(text);
      if (end < 0 || !status) {
        reject(new Error(`GET ${target}: not an HTTP answer: ${JSON.stringify(text.slice(0, 200))}`));
        return;
      }
      const head: Record<string, string> = {};
      for (const line of text.slice(0, end).split('\r\n').slice(1)) {
        const colon = line.indexOf(':');
        if (colon > 0) head[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      resolve({ status: Number(status[1]), headers: head, body: decodeBody(text.slice(end + 4), head) });
    });
  });
}

/** The body, de-chunked when it came with `transfer-encoding: chunked`. */
function decodeBody(raw: string, headers: Record<string, string>): string {
  if (!/chunked/i.test(headers['transfer-encoding'] ?? '')) return raw;
  let body = '';
  let rest = raw;
  for (;;) {
    const lineEnd = rest.indexOf('\r\n');
    const size = parseInt(rest.slice(0, lineEnd), 16);
    if (lineEnd < 0 || !(size > 0)) return body;
    body += rest.slice(lineEnd + 2, lineEnd + 2 + size);
    rest = rest.slice(lineEnd + 2 + size + 2);
  }
}

import type * as http from 'node:http';

/** A body larger than the route accepts. */
export class BodyTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`request body larger than ${limit} bytes`);
  }
}

/**
 * Reads a request body of at most `limit` bytes. A declared Content-Length over the limit is
 * refused before anything is read; a body growing past it stops being read at once.
 */
export function readBody(req: http.IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > limit) return Promise.reject(new BodyTooLargeError(limit));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.off('data', onData);
        req.pause();
        reject(new BodyTooLargeError(limit));
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.once('end', () => resolve(Buffer.concat(chunks)));
    req.once('error', reject);
  });
}

export function sendText(res: http.ServerResponse, status: number, body: string, headers: Record<string, string> = {}): void {
  send(res, status, 'text/plain; charset=utf-8', body, headers);
}

export function sendJson(res: http.ServerResponse, status: number, value: unknown): void {
  send(res, status, 'application/json', `${JSON.stringify(value, null, 2)}\n`);
}

export function sendHtml(res: http.ServerResponse, status: number, body: string): void {
  send(res, status, 'text/html; charset=utf-8', body);
}

export function send(res: http.ServerResponse, status: number, contentType: string, body: string | Buffer, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(body), ...headers });
  res.end(body);
}

import type * as http from 'node:http';

/** A response the proxy makes itself (Envoy's local reply): plain text, with its length. */
export function sendLocalReply(res: http.ServerResponse, status: number, body: string, headers: Record<string, string | string[]> = {}): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const payload = Buffer.from(body);
  res.writeHead(status, { ...headers, 'content-type': headers['content-type'] ?? 'text/plain', 'content-length': String(payload.length) });
  res.end(payload);
}

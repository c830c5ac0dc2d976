import type * as http from 'node:http';
import { endResponse } from './response-flush';

/** A response the proxy makes itself (Envoy's local reply): plain text, with its length; ended as every downstream response is (response-flush.ts). */
export function sendLocalReply(res: http.ServerResponse, status: number, body: string, headers: Record<string, string | string[]> = {}): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const payload = Buffer.from(body);
  res.writeHead(status, { ...headers, 'content-type': headers['content-type'] ?? 'text/plain', 'content-length': String(payload.length) });
  endResponse(res, payload);
}

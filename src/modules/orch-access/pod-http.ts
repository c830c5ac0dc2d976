import * as http from 'node:http';
import type { Duplex } from 'node:stream';
import { describeForward, ForwardTargetName, PortForwardError } from './forward-stream';

/** One HTTP/1.1 request to a pod's port. */
export interface PodHttpRequest {
  method?: string;
  /** Path and query, starting with `/`. */
  path: string;
  body?: string | Buffer;
  headers?: Record<string, string>;
  /** Longest the whole exchange (port-forward included) may take. Default 30 s. */
  timeoutMs?: number;
}

export interface PodHttpResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** Bodies either way above this are refused: a pod's admin or debug answer is far smaller. */
export const MAX_POD_HTTP_BODY = 64 * 1024 * 1024;
export const DEFAULT_POD_HTTP_TIMEOUT_MS = 30_000;

/**
 * HTTP/1.1 over a connection `open` makes (a port-forward): node:http on that one Duplex,
 * `Connection: close`, the answer read whole. Errors name the request and the pod's port.
 */
export async function podHttp(target: ForwardTargetName, request: PodHttpRequest, open: (timeoutMs: number) => Promise<Duplex>): Promise<PodHttpResponse> {
  const method = (request.method ?? 'GET').toUpperCase();
  const what = `${method} ${request.path} on ${describeForward(target)}`;
  if (!request.path.startsWith('/')) throw new PortForwardError(`${what}: the path must start with "/"`);
  const body = typeof request.body === 'string' ? Buffer.from(request.body) : request.body;
  if (body && body.length > MAX_POD_HTTP_BODY) throw new PortForwardError(`${what}: the request body of ${body.length} bytes is more than the ${MAX_POD_HTTP_BODY} bytes allowed`);
  const timeoutMs = request.timeoutMs ?? DEFAULT_POD_HTTP_TIMEOUT_MS;
  const deadline = Date.now() + timeoutMs;
  let timer: NodeJS.Timeout | undefined;
  let connection: Duplex | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      connection?.destroy();
      reject(new PortForwardError(`${what}: no answer within ${timeoutMs} ms`));
    }, timeoutMs);
  });
  try {
    connection = await Promise.race([open(timeoutMs), timedOut]);
    if (Date.now() > deadline) throw new PortForwardError(`${what}: no answer within ${timeoutMs} ms`);
    return await Promise.race([exchange(connection, target, method, request, body, what), timedOut]);
  } finally {
    clearTimeout(timer);
    connection?.destroy();
  }
}

function exchange(connection: Duplex, target: ForwardTargetName, method: string, request: PodHttpRequest, body: Buffer | undefined, what: string): Promise<PodHttpResponse> {
  return new Promise((resolve, reject) => {
    const fail = (err: Error) => reject(err instanceof PortForwardError ? err : new PortForwardError(`${what}: ${err.message}`));
    const headers: Record<string, string> = { Host: `localhost:${target.port}`, ...request.headers };
    if (body) headers['Content-Length'] = String(body.length);
    const req = http.request(
      {
        method,
        path: request.path,
        headers,
        // The forward is the connection; node:http does not dial.
        createConnection: (() => connection) as unknown as http.RequestOptions['createConnection'],
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_POD_HTTP_BODY) {
            fail(new PortForwardError(`${what}: the answer is more than the ${MAX_POD_HTTP_BODY} bytes allowed`));
            res.destroy();
            return;
          }
          chunks.push(chunk);
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on('error', fail);
        res.on('aborted', () => fail(new PortForwardError(`${what}: the connection closed before the whole answer came`)));
      },
    );
    req.on('error', (err: Error & { code?: string }) => {
      if (err.code === 'ECONNRESET' && !(err instanceof PortForwardError)) fail(new PortForwardError(`${what}: the connection closed before an answer came`));
      else fail(err);
    });
    req.end(body);
  });
}

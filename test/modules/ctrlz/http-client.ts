import * as http from 'node:http';

export interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  text: string;
}

/** One HTTP/1.1 request to 127.0.0.1:<port>, bounded by `timeoutMs`. */
export function request(
  port: number,
  method: string,
  path: string,
  options: { body?: string | Buffer; headers?: Record<string, string>; timeoutMs?: number } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path, headers: options.headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('end', () => {
        const body = Buffer.concat(chunks);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body, text: body.toString('utf8') });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.setTimeout(options.timeoutMs ?? 10_000, () => req.destroy(new Error(`${method} ${path} timed out`)));
    req.end(options.body);
  });
}

export async function json<T = unknown>(port: number, method: string, path: string, body?: unknown): Promise<{ status: number; value: T }> {
  const r = await request(port, method, path, body === undefined ? {} : { body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } });
  return { status: r.status, value: JSON.parse(r.text) as T };
}

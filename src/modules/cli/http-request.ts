import * as http from 'node:http';

export interface HttpResult {
  status: number;
  body: string;
}

/** One plain-HTTP request with a deadline; used by the `request` and `wait` commands. */
export function httpRequest(method: string, url: string, body?: string, timeoutMs = 30_000): Promise<HttpResult> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: method.toUpperCase(), timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`no response from ${url} within ${timeoutMs}ms`)));
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

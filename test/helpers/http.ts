import * as http from 'node:http';

export interface HttpResult {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A plain GET to 127.0.0.1:<port><path>. */
export function httpGet(port: number, path: string, host = '127.0.0.1'): Promise<HttpResult> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host, port, path, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.setTimeout(5000, () => req.destroy(new Error(`GET ${path} timed out`)));
  });
}

/** Sum of every series of `name` in a Prometheus text exposition (0 when absent). */
export function metricValue(exposition: HttpResult | string, name: string, labels: Record<string, string> = {}): number {
  const text = typeof exposition === 'string' ? exposition : exposition.body;
  let sum = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)/.exec(line);
    if (!m || m[1] !== name) continue;
    const series = m[2] ?? '';
    if (Object.entries(labels).some(([k, v]) => !series.includes(`${k}="${v}"`))) continue;
    sum += Number(m[3]);
  }
  return sum;
}

/**
 * An httpGet probe of the application, as the incumbent's status server sends it: the
 * kubelet's request headers are passed on (so the application sees `kube-probe/...`), the
 * probe's own httpHeaders replace headers of the same name, HTTPS certificates are not checked
 * (the kubelet does not check them either), and the answer is the application's status, except
 * that a redirect to another host is a success (200) and same-host redirects are followed (10
 * at most).
 */
import * as http from 'node:http';
import * as https from 'node:https';
import { HttpGetAction } from './app-probers';
import { hostPort, ProbeOutcome } from './outcome';

const MAX_REDIRECTS = 10;

/** Headers that belong to the kubelet's connection to us, not to the probe we send. */
const NOT_FORWARDED = new Set(['host', 'connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer', 'content-length', 'content-type']);

export interface HttpProbeContext {
  /** Where the application listens when the probe names no host. */
  host: string;
  timeoutMs: number;
  /** The headers of the request the status server received. */
  incomingHeaders: http.IncomingHttpHeaders;
}

export async function probeHttp(action: HttpGetAction, ctx: HttpProbeContext): Promise<ProbeOutcome> {
  const headers = probeHeaders(action, ctx.incomingHeaders);
  const start = new URL(`${action.scheme.toLowerCase()}://${hostPort(action.host ?? ctx.host, action.port)}${action.path}`);
  const deadline = Date.now() + ctx.timeoutMs;
  let url = start;
  for (let hop = 0; ; hop++) {
    let status: number;
    let location: string | undefined;
    try {
      ({ status, location } = await getOnce(url, headers, deadline - Date.now(), ctx.timeoutMs));
    } catch (e) {
      return { status: 500, detail: `GET ${url.href} failed: ${(e as Error).message}` };
    }
    if (status < 300 || status >= 400 || !location) return { status, detail: `GET ${url.href} answered ${status}` };
    const next = new URL(location, url);
    // Redirected elsewhere: success, as the kubelet counts it (and a 3xx without the Location we drop would be invalid).
    if (next.hostname !== start.hostname) return { status: 200, detail: `GET ${url.href} redirected to another host (${next.host})` };
    if (hop + 1 >= MAX_REDIRECTS) return { status: 500, detail: `GET ${start.href}: stopped after ${MAX_REDIRECTS} redirects` };
    url = next;
  }
}

function probeHeaders(action: HttpGetAction, incoming: http.IncomingHttpHeaders): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(incoming)) {
    if (value !== undefined && !NOT_FORWARDED.has(name)) out[name] = value;
  }
  const own = new Map<string, string[]>();
  for (const { name, value } of action.httpHeaders) {
    // HTTP/2's :authority is the Host header in HTTP/1.1.
    const key = name.toLowerCase() === ':authority' ? 'host' : name.toLowerCase();
    own.set(key, [...(own.get(key) ?? []), value]);
  }
  for (const [name, values] of own) out[name] = name === 'host' ? values[values.length - 1] : values.length === 1 ? values[0] : values;
  return out;
}

function getOnce(url: URL, headers: Record<string, string | string[]>, timeoutMs: number, budgetMs: number): Promise<{ status: number; location?: string }> {
  return new Promise((resolve, reject) => {
    if (timeoutMs <= 0) {
      reject(new Error(`no answer within the probe's ${budgetMs}ms`));
      return;
    }
    const options: https.RequestOptions = {
      method: 'GET',
      host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
      port: url.port,
      path: `${url.pathname}${url.search}`,
      headers,
      agent: false,
      rejectUnauthorized: false,
    };
    const req = (url.protocol === 'https:' ? https : http).request(options, (res) => {
      clearTimeout(timer);
      res.resume(); // only the status matters; read the body so the socket closes cleanly
      resolve({ status: res.statusCode ?? 500, location: res.headers.location });
    });
    const timer = setTimeout(() => req.destroy(new Error(`no answer within the probe's ${budgetMs}ms`)), timeoutMs);
    req.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    req.end();
  });
}

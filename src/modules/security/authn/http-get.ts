/** A bounded HTTP(S) GET of a small text document (a key set, an OpenID discovery document). */
import * as http from 'node:http';
import * as https from 'node:https';

export interface HttpGetOptions {
  /** Deadline for the whole exchange, redirects included. */
  timeoutMs: number;
  /** Accept any server certificate (JWKS_RESOLVER_INSECURE_SKIP_VERIFY). */
  insecureSkipVerify: boolean;
  /** Larger bodies are an error; key sets are a few kilobytes. */
  maxBytes?: number;
  /** Redirects followed before giving up (Go's client, which the incumbent uses, follows them too). */
  maxRedirects?: number;
}

const DEFAULT_MAX_BYTES = 1024 * 1024;
const DEFAULT_MAX_REDIRECTS = 5;

export class HttpGetError extends Error {}

/** The body of a 2xx answer to GET `url`; anything else is an HttpGetError saying what went wrong. */
export async function httpGetText(url: string, options: HttpGetOptions): Promise<string> {
  const deadline = Date.now() + options.timeoutMs;
  let target = url;
  for (let redirects = 0; ; redirects++) {
    const answer = await getOnce(target, options, deadline);
    if (answer.kind === 'body') return answer.body;
    if (redirects >= (options.maxRedirects ?? DEFAULT_MAX_REDIRECTS)) throw new HttpGetError(`GET ${url}: too many redirects`);
    target = new URL(answer.location, target).toString();
  }
}

type Answer = { kind: 'body'; body: string } | { kind: 'redirect'; location: string };

function getOnce(url: string, options: HttpGetOptions, deadline: number): Promise<Answer> {
  return new Promise((resolve, reject) => {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      reject(new HttpGetError(`"${url}" is not a URL`));
      return;
    }
    const secure = parsed.protocol === 'https:';
    if (!secure && parsed.protocol !== 'http:') {
      reject(new HttpGetError(`GET ${url}: scheme ${parsed.protocol} is not supported; use http or https`));
      return;
    }
    const left = deadline - Date.now();
    if (left <= 0) {
      reject(new HttpGetError(`GET ${url}: timed out`));
      return;
    }
    const fail = (message: string) => new HttpGetError(`GET ${url}: ${message}`);
    const request = (secure ? https : http).get(
      parsed,
      // No keep-alive: fetches are minutes apart.
      { agent: false, ...(secure ? { rejectUnauthorized: !options.insecureSkipVerify } : {}) },
      (response) => {
        const status = response.statusCode ?? 0;
        const location = response.headers.location;
        if (status >= 300 && status < 400 && location) {
          response.resume();
          clearTimeout(timer);
          resolve({ kind: 'redirect', location });
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > (options.maxBytes ?? DEFAULT_MAX_BYTES)) request.destroy(fail(`body larger than ${options.maxBytes ?? DEFAULT_MAX_BYTES} bytes`));
          else chunks.push(chunk);
        });
        response.on('end', () => {
          clearTimeout(timer);
          const body = Buffer.concat(chunks).toString('utf8');
          if (status < 200 || status >= 300) reject(fail(`status ${status}${body ? `: ${snippet(body)}` : ''}`));
          else resolve({ kind: 'body', body });
        });
        response.on('error', (err) => {
          clearTimeout(timer);
          reject(err instanceof HttpGetError ? err : fail(err.message));
        });
      },
    );
    const timer = setTimeout(() => request.destroy(fail(`timed out after ${options.timeoutMs} ms`)), left);
    request.on('error', (err) => {
      clearTimeout(timer);
      reject(err instanceof HttpGetError ? err : fail(err.message));
    });
  });
}

function snippet(body: string): string {
  const oneLine = JSON.stringify(body);
  return oneLine.length > 100 ? `${oneLine.slice(0, 100)}...` : oneLine;
}

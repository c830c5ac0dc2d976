/**
 * The built-in proxy's side of the response-header plugin: the filter that the daemon's config
 * names, created once per listener config and run on every upstream response.
 */
import { HttpFilter, meshPlugin, passRequest, ProxyHttpFilterFactory, ProxyHttpRequest, ProxyHttpResponse, typeUrlOf } from 'mesh';

export const RESPONSE_HEADER_FILTER = 'example.response_header';
export const RESPONSE_HEADER_TYPE = typeUrlOf('example.filters.http.response_header.v1.Config');

type Render = (request: ProxyHttpRequest, response: ProxyHttpResponse) => string;

const TOKEN = /^[!#$%&'*+.^_`|~0-9a-z-]+$/;
const PLACEHOLDER = /%([A-Z_]+)(?:\(([^)%]*)\))?%/g;

/** Compiles `value_template` once; a template the proxy cannot honour throws, so the listener is NACKed. */
function compileTemplate(template: string, service: string, where: string): Render {
  if (/[\0-\x08\x0a-\x1f\x7f]/.test(template)) throw new Error(`${where}: value_template has a control character`);
  const parts: Render[] = [];
  let last = 0;
  for (const m of template.matchAll(PLACEHOLDER)) {
    const text = template.slice(last, m.index);
    parts.push(() => text);
    parts.push(placeholder(m[1], m[2], service, where));
    last = m.index! + m[0].length;
  }
  const tail = template.slice(last);
  parts.push(() => tail);
  return (request, response) => parts.map((p) => p(request, response)).join('');
}

function placeholder(name: string, arg: string | undefined, service: string, where: string): Render {
  switch (name) {
    case 'SERVICE':
      return () => service;
    case 'METHOD':
      return (request) => request.method;
    case 'PATH':
      return (request) => request.path;
    case 'RESPONSE_CODE':
      return (_request, response) => String(response.status);
    case 'REQ':
      if (!arg) throw new Error(`${where}: %REQ(...)% needs a header name`);
      return (request) => request.headers[arg.toLowerCase()] ?? '';
    default:
      throw new Error(`${where}: unknown placeholder %${name}%`);
  }
}

@meshPlugin({ name: 'response-header', enabledBy: 'EXAMPLE_RESPONSE_HEADER', provides: [ProxyHttpFilterFactory] })
export class ResponseHeaderProxyFilter implements ProxyHttpFilterFactory {
  readonly typeUrl = RESPONSE_HEADER_TYPE;

  create(name: string, config: Record<string, unknown>): HttpFilter {
    const header = String(config.header_name ?? '').toLowerCase();
    if (!TOKEN.test(header)) throw new Error(`${name}: header_name ${JSON.stringify(config.header_name ?? '')} is not a header name`);
    const render = compileTemplate(String(config.value_template ?? ''), String(config.service ?? ''), name);
    return {
      name,
      // Nothing to do on requests: the proxy leaves the filter out of the request path.
      onRequest: passRequest,
      onResponse(response, request) {
        response.headers[header] = render(request, response);
      },
    };
  }
}

/**
 * The shape of the built-in proxy's admin handlers, as Envoy's admin registers its own: a path,
 * a help line, whether it changes state (then only POST may call it), and its parameters, which
 * the home page and `/help` list.
 */
export interface AdminParam {
  id: string;
  help: string;
  /** The values an enum parameter takes. */
  choices?: readonly string[];
}

export interface AdminResponse {
  status: number;
  contentType: string;
  body: string;
}

export interface AdminRequest {
  method: string;
  url: URL;
}

export interface AdminHandler {
  path: string;
  help: string;
  /** Changes the proxy's state: Envoy refuses any method but POST. */
  mutates: boolean;
  params?: readonly AdminParam[];
  handle(request: AdminRequest): AdminResponse;
}

export const text = (status: number, body: string): AdminResponse => ({ status, contentType: 'text/plain; charset=UTF-8', body });
export const json = (body: unknown): AdminResponse => ({ status: 200, contentType: 'application/json', body: JSON.stringify(body, null, 2) + '\n' });

/** Envoy's `/help` (and the tail of its 404): every handler in path order, POST ones marked, with their parameters. */
export function helpText(handlers: readonly AdminHandler[]): string {
  let out = 'admin commands are:\n';
  for (const h of [...handlers].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))) {
    out += `  ${h.path}${h.mutates ? ' (POST)' : ''}: ${h.help}\n`;
    for (const p of h.params ?? []) out += `      ${p.id}: ${p.help}${p.choices ? `; One of (${p.choices.join(', ')})` : ''}\n`;
  }
  return out;
}

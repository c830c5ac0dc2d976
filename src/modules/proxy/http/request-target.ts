/**
 * The request target of an HTTP/1.1 request line as Envoy's HTTP/1 codec turns it into `:path`
 * and `:authority`: the origin form (`/a?b`) as it is; the absolute form (`http://host/a?b`,
 * RFC 9112 §3.2.2) split into its authority, which replaces Host, and its path (`/` when
 * empty). Any other form (`*`) stays as it is, and the connection manager answers it 404 as
 * Envoy does for a path that is not relative. Without this an absolute-form request would
 * reach RBAC with a path no path rule matches.
 */
const ABSOLUTE_FORM = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/([^/?#]*)(.*)$/s;

export interface RequestTarget {
  path: string;
  /** The authority of an absolute-form target. */
  authority?: string;
}

export function parseRequestTarget(target: string): RequestTarget {
  const absolute = ABSOLUTE_FORM.exec(target);
  if (!absolute) return { path: target };
  return { authority: absolute[1], path: absolute[2] === '' ? '/' : absolute[2] };
}

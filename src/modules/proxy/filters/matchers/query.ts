/** Query parameters of `:path`, percent-decoded; the first of repeated names wins. */
export function queryParameters(path: string): Map<string, string> {
  const params = new Map<string, string>();
  const start = path.indexOf('?');
  if (start < 0) return params;
  const end = path.indexOf('#', start);
  for (const pair of path.slice(start + 1, end < 0 ? undefined : end).split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const name = percentDecode(eq < 0 ? pair : pair.slice(0, eq));
    if (!params.has(name)) params.set(name, percentDecode(eq < 0 ? '' : pair.slice(eq + 1)));
  }
  return params;
}

function percentDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

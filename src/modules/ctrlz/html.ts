/** Server-rendered HTML for the ControlZ pages: one layout, no scripts or assets from elsewhere. */

export function escapeHtml(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

export interface NavLink {
  title: string;
  href: string;
}

const STYLE = `
body{margin:0;font-family:system-ui,sans-serif;color:#1d2330;display:flex;min-height:100vh}
nav{background:#20304a;color:#fff;padding:1em;min-width:12em}
nav a{color:#cfe0ff;display:block;padding:.3em 0;text-decoration:none}
nav a.current{color:#fff;font-weight:bold}
nav .instance{font-size:.8em;color:#9fb3d1;margin-bottom:1em;word-break:break-all}
main{padding:1em 2em;flex:1}
table{border-collapse:collapse;margin:.5em 0}
th,td{border-bottom:1px solid #d8dde6;padding:.25em .8em;text-align:left;vertical-align:top}
th{background:#eef1f6}
td.num{text-align:right;font-variant-numeric:tabular-nums}
code,pre{font-family:ui-monospace,monospace}
pre{white-space:pre-wrap;word-break:break-all}
.note{color:#5a6478;font-size:.9em}
.error{color:#a31515}
`;

/** A full page: the navigation (every topic), the instance name, and `body` (already escaped). */
export function page(title: string, instance: string, nav: readonly NavLink[], current: string, body: string): string {
  const links = nav.map((l) => `<a href="${escapeHtml(l.href)}"${l.href === current ? ' class="current"' : ''}>${escapeHtml(l.title)}</a>`).join('\n');
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>ControlZ: ${escapeHtml(title)}</title><style>${STYLE}</style></head>
<body>
<nav><div class="instance">ControlZ<br>${escapeHtml(instance)}</div>
${links}
</nav>
<main><h1>${escapeHtml(title)}</h1>
${body}
</main>
</body></html>
`;
}

/** A two-column table of names and values. */
export function keyValueTable(rows: ReadonlyArray<readonly [string, unknown]>, headers: readonly [string, string] = ['Name', 'Value']): string {
  const body = rows.map(([k, v]) => `<tr><th scope="row">${escapeHtml(k)}</th><td>${escapeHtml(v)}</td></tr>`).join('\n');
  return `<table><thead><tr><th>${escapeHtml(headers[0])}</th><th>${escapeHtml(headers[1])}</th></tr></thead>\n<tbody>\n${body}\n</tbody></table>`;
}

/** Bytes as a number with a binary unit (`12.3 MiB`), exact bytes beside it. */
export function formatBytes(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${bytes} B` : `${value.toFixed(1)} ${units[unit]} (${bytes} B)`;
}

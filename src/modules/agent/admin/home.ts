/**
 * The admin home page `/` (an HTML table of the admin paths, as Envoy's home page is: a link
 * for each reading path, a POST form with its parameters for each changing one) and `/help`.
 * Links are relative, so the page works behind a port-forward on any local address.
 */
import { AdminHandler, AdminResponse, helpText, text } from './handlers';

const escape = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export function homePage(handlers: readonly AdminHandler[], title: string): AdminResponse {
  const rows = [...handlers]
    .filter((h) => h.path !== '/')
    .sort((a, b) => (a.path < b.path ? -1 : 1))
    .map((h) => {
      const target = escape(h.path.slice(1));
      const inputs = (h.params ?? [])
        .map((p) =>
          p.choices
            ? `<label>${escape(p.id)} <select name="${escape(p.id)}">${p.choices.map((c) => `<option>${escape(c)}</option>`).join('')}</select></label>`
            : `<label>${escape(p.id)} <input type="text" name="${escape(p.id)}"></label>`,
        )
        .join(' ');
      const command = h.mutates
        ? `<form action="${target}" method="post"><button type="submit">${target}</button> ${inputs}</form>`
        : `<a href="${target}">${target}</a>`;
      return `<tr><td class="home-data">${command}</td><td class="home-data">${escape(h.help)}</td></tr>`;
    })
    .join('\n');
  const body = `<!DOCTYPE html>
<html>
<head><meta charset="utf-8"><title>${escape(title)}</title>
<style>table { border-collapse: collapse; } td, th { padding: 2px 8px; text-align: left; } tr:nth-child(even) { background: #f0f0f0; }</style>
</head>
<body>
<h1>${escape(title)}</h1>
<table class="home-table">
<thead><tr><th>Command</th><th>Description</th></tr></thead>
<tbody>
${rows}
</tbody>
</table>
</body>
</html>
`;
  return { status: 200, contentType: 'text/html; charset=UTF-8', body };
}

export function helpHandler(handlers: () => readonly AdminHandler[]): AdminHandler {
  return { path: '/help', help: 'print out list of admin commands', mutates: false, handle: () => text(200, helpText(handlers())) };
}

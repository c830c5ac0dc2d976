/** The logging scopes topic: the JSON API that changes the daemon's live logging, and its page. */
import type { Logging, ScopeState } from '../logging';
import { escapeHtml } from './html';
import { isSettableLevel, ScopeInfo, ScopeUpdate, SETTABLE_LEVELS } from './scope-info';

/** A request the scopes API refuses; `status` 400 names the field, 404 the scope. */
export class ScopeRequestError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export function scopeInfo(state: ScopeState): ScopeInfo {
  return {
    name: state.name,
    description: state.description,
    output_level: state.outputLevel,
    stack_trace_level: state.stackTraceLevel,
    log_callers: state.logCallers,
  };
}

export function allScopes(logging: Logging): ScopeInfo[] {
  return logging.scopeNames().map((name) => scopeInfo(logging.scopeState(name)!));
}

export function oneScope(logging: Logging, name: string): ScopeInfo {
  const state = logging.scopeState(name);
  if (!state) throw unknownScope(name);
  return scopeInfo(state);
}

function unknownScope(name: string): ScopeRequestError {
  return new ScopeRequestError(404, `unknown scope ${JSON.stringify(name)}; see /scopej/ for the scopes of this daemon`);
}

/** Fields a PUT may carry: the three it changes, and the two a client echoes back from a GET. */
const WRITABLE = new Set(['output_level', 'stack_trace_level', 'log_callers']);
const ECHOED = new Set(['name', 'description']);

/** Checks a PUT body (already parsed JSON) for scope `name`; nothing is changed here. */
export function parseScopeUpdate(name: string, body: unknown): ScopeUpdate {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new ScopeRequestError(400, 'the body must be a JSON object with output_level, stack_trace_level and/or log_callers');
  }
  const update: ScopeUpdate = {};
  for (const [field, value] of Object.entries(body)) {
    if (ECHOED.has(field)) {
      if (field === 'name' && value !== name) throw new ScopeRequestError(400, `name: ${JSON.stringify(value)} does not match the scope in the path (${JSON.stringify(name)})`);
      continue;
    }
    if (!WRITABLE.has(field)) throw new ScopeRequestError(400, `${JSON.stringify(field.slice(0, 64))}: unknown field; expected output_level, stack_trace_level or log_callers`);
    if (field === 'log_callers') {
      if (typeof value !== 'boolean') throw new ScopeRequestError(400, `log_callers: expected true or false, got ${describe(value)}`);
      update.log_callers = value;
      continue;
    }
    if (!isSettableLevel(value)) throw new ScopeRequestError(400, `${field}: invalid level ${describe(value)}; levels are ${SETTABLE_LEVELS.join(', ')}`);
    update[field as 'output_level' | 'stack_trace_level'] = value;
  }
  return update;
}

/** Applies a checked update to the live logging and returns the scope as it is now. */
export function applyScopeUpdate(logging: Logging, name: string, update: ScopeUpdate): ScopeInfo {
  if (!logging.scopeState(name)) throw unknownScope(name);
  if (update.output_level) logging.setOutputLevel(name, update.output_level);
  if (update.stack_trace_level) logging.setStackTraceLevel(name, update.stack_trace_level);
  if (update.log_callers !== undefined) logging.setLogCallers(name, update.log_callers);
  return oneScope(logging, name);
}

function describe(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 64 ? `${text.slice(0, 64)}...` : text;
}

/** The scopes page: one row per scope, each a small form posting to `/scopez/`. */
export function scopesHtml(scopes: readonly ScopeInfo[], message?: { error: boolean; text: string }): string {
  // A form cannot span table cells: each row's controls name their form (HTML's form attribute).
  const select = (form: string, field: string, current: string) =>
    `<select form="${form}" name="${field}">${[...SETTABLE_LEVELS, ...(isSettableLevel(current) ? [] : [current])]
      .map((l) => `<option${l === current ? ' selected' : ''}>${escapeHtml(l)}</option>`)
      .join('')}</select>`;
  const rows = scopes
    .map((s, i) => {
      const form = `scope-${i}`;
      return `<tr><td><code>${escapeHtml(s.name)}</code></td><td>${escapeHtml(s.description)}</td>
<td>${select(form, 'output_level', s.output_level)}</td><td>${select(form, 'stack_trace_level', s.stack_trace_level)}</td>
<td><input form="${form}" type="checkbox" name="log_callers" value="true"${s.log_callers ? ' checked' : ''}></td>
<td><form id="${form}" method="post" action="/scopez/"><input type="hidden" name="scope" value="${escapeHtml(s.name)}"><button type="submit">Set</button></form></td></tr>`;
    })
    .join('\n');
  const note = message ? `<p class="${message.error ? 'error' : 'note'}">${escapeHtml(message.text)}</p>` : '';
  return `${note}
<p class="note">Changes take effect at once and last until the daemon restarts. The same is served as JSON at <code>/scopej/</code>.</p>
<table><thead><tr><th>Scope</th><th>Description</th><th>Output level</th><th>Stack trace level</th><th>Log callers</th><th></th></tr></thead>
<tbody>
${rows}
</tbody></table>`;
}

/** A submitted row of the scopes page (`application/x-www-form-urlencoded`) as an update. */
export function formScopeUpdate(form: URLSearchParams): { name: string; update: unknown } {
  const name = form.get('scope');
  if (!name) throw new ScopeRequestError(400, 'scope: missing from the form');
  const update: Record<string, unknown> = { log_callers: form.get('log_callers') === 'true' };
  for (const field of ['output_level', 'stack_trace_level']) {
    const value = form.get(field);
    if (value !== null) update[field] = value;
  }
  return { name, update };
}

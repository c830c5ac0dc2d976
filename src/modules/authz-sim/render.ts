/** How simulations are printed: `short` for people, `json`/`yaml` for tools, and the requests table. */
import { stringify } from 'yaml';
import { table } from '../cli/table';
import { Answer, EngineResult } from './answer';
import { Simulation } from './simulator';

export type OutputFormat = 'short' | 'json' | 'yaml';

/** Whether the answer meets the request's expectation (none: nothing to check). */
export function meetsExpectation(s: Simulation): boolean | undefined {
  const expect = s.request.expect;
  if (!expect) return undefined;
  if (expect.status !== undefined && expect.status !== statusNumber(s.answer)) return false;
  if (expect.rule !== undefined && expect.rule !== (s.answer.matched?.rule ?? 'none')) return false;
  return true;
}

/** The status the client sees; a TCP connection let through counts as 200, a closed or refused one as 403. */
export function statusNumber(a: Answer): number {
  return a.status ?? (a.decision === 'allowed' ? 200 : 403);
}

function statusText(a: Answer): string {
  return a.status !== undefined ? String(a.status) : a.decision === 'allowed' ? 'tcp' : 'closed';
}

export function requestLine(s: Simulation): string {
  const r = s.request;
  const who = s.source.principal ? `${s.source.principal} at ${s.source.ip}` : `${s.source.ip} (plain text)`;
  const token = r.token ? ', with token' : r.claims ? ', with claims (unverified)' : '';
  return `${r.method} ${r.path} → ${s.destination}:${s.port} from ${who}${token}`;
}

function engineLines(engines: readonly EngineResult[], shadow: boolean): string[] {
  const lines: string[] = [];
  for (const e of engines) {
    for (const r of e.rules) {
      const outcome = r.matched ? (shadow ? `matched: would ${e.action === 'ALLOW' ? 'allow' : e.action === 'AUDIT' ? 'audit' : 'deny'}` : 'matched') : `no match: ${r.reason}`;
      lines.push(`    ${e.action.padEnd(6)} ${r.rule}: ${outcome}`);
    }
  }
  return lines;
}

export function shortText(s: Simulation): string {
  const a = s.answer;
  const lines = [`${statusText(a)} ${a.decision.toUpperCase()}: ${a.reason}`, `  request: ${requestLine(s)}`];
  if (a.matched) lines.push(`  decided by: ${a.matched.rule} (${a.matched.action})`);
  if (a.authentication) lines.push(`  token: ${a.authentication.reason} (${a.authentication.status})${a.authentication.verified ? '' : ', UNVERIFIED: claims signed by the simulator'}`);
  const audits = a.rules.filter((e) => e.action === 'AUDIT' && e.matched);
  for (const e of audits) lines.push(`  audited by: ${e.matched} (AUDIT)`);
  const considered = engineLines(a.rules, false);
  if (considered.length) lines.push('  rules considered:', ...considered);
  else if (a.decision !== 'unauthenticated') lines.push('  rules considered: none (no AuthorizationPolicy selects the workload)');
  const shadow = engineLines(a.dryRun, true);
  if (shadow.length) lines.push('  dry-run rules (not enforced):', ...shadow);
  return lines.join('\n');
}

/** The plain data of a simulation, for json and yaml. */
export function document(s: Simulation): Record<string, unknown> {
  const { expect, label, ...request } = s.request;
  const out: Record<string, unknown> = {
    ...(label ? { name: label } : {}),
    request: { ...request, token: request.token ? '(given)' : undefined },
    destination: { workload: s.destination, port: s.port },
    source: s.source,
    ...s.answer,
  };
  if (expect) out.expected = expect;
  const met = meetsExpectation(s);
  if (met !== undefined) out.pass = met;
  return JSON.parse(JSON.stringify(out));
}

export function formatOne(s: Simulation, format: OutputFormat): string {
  if (format === 'json') return JSON.stringify(document(s), null, 2);
  if (format === 'yaml') return stringify(document(s)).trimEnd();
  return shortText(s);
}

export function formatMatrix(list: readonly Simulation[], format: OutputFormat): string {
  if (format === 'json') return JSON.stringify(list.map(document), null, 2);
  if (format === 'yaml') return stringify(list.map(document)).trimEnd();
  const rows = list.map((s, i) => {
    const met = meetsExpectation(s);
    const expect = s.request.expect;
    const expected = expect ? [expect.status ?? '', expect.rule ?? ''].filter((x) => x !== '').join(' ') : '-';
    return [
      String(i + 1),
      s.request.label ?? '',
      `${s.request.method} ${s.request.path}`,
      expected,
      statusText(s.answer),
      s.answer.matched ? `${s.answer.matched.rule} (${s.answer.matched.action})` : 'none',
      met === undefined ? '-' : met ? 'ok' : 'FAIL',
    ];
  });
  const failed = list.filter((s) => meetsExpectation(s) === false).length;
  const checked = list.filter((s) => meetsExpectation(s) !== undefined).length;
  const summary = `${list.length} requests, ${checked} with expectations, ${failed} failed`;
  return `${table(['#', 'NAME', 'REQUEST', 'EXPECTED', 'GOT', 'RULE', 'RESULT'], rows)}\n${summary}`;
}

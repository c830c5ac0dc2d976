/**
 * One request to simulate: where it goes, what it carries, who sends it, and (in a requests
 * file) what the answer should be. Built from the command's flags or from an entry of a
 * `--requests` file over those flags; every problem names the flag or the entry's field.
 */
import { isIP } from 'node:net';
import { UserError } from '../shared/user-error';

/** Usage errors exit 2, as the command's flag errors do. */
export const USAGE_EXIT = 2;

export function usage(message: string): UserError {
  return new UserError(message, USAGE_EXIT);
}

export interface Destination {
  /** `<pod>[.<ns>]` (a pod, or a WorkloadEntry when the config comes from files only). */
  name?: string;
  labels?: Record<string, string>;
  namespace?: string;
}

export interface SimRequest {
  /** A label for the table (`name` of a requests file entry). */
  label?: string;
  to: Destination;
  port?: number;
  method: string;
  path: string;
  host?: string;
  headers: Record<string, string>;
  /** `<pod>[.<ns>]` whose identity and address send the request. */
  from?: string;
  principal?: string;
  sourceNamespace?: string;
  sourceIp?: string;
  token?: string;
  claims?: Record<string, unknown>;
  issuer?: string;
  expect?: Expectation;
}

export interface Expectation {
  status?: number;
  /** `<name>.<namespace> rule <n>`, or `none`. */
  rule?: string;
}

type Obj = Record<string, unknown>;

const FIELDS = [
  'name', 'to', 'toLabels', 'namespace', 'port', 'method', 'path', 'host', 'headers', 'from', 'principal', 'sourceNamespace', 'sourceIp', 'token', 'claims',
  'issuer', 'expect',
];

/** An entry of a requests file over the command line's request (`base`); `where` names it in errors. */
export function requestFromEntry(entry: unknown, base: SimRequest, where: string): SimRequest {
  if (!isObj(entry)) throw usage(`${where}: expected a mapping with the request's fields, got ${describe(entry)}`);
  for (const key of Object.keys(entry)) {
    if (!FIELDS.includes(key)) throw usage(`${where}.${key}: unknown field; known fields are ${FIELDS.join(', ')}`);
  }
  const str = (key: string): string | undefined => {
    const v = entry[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'string' && typeof v !== 'number') throw usage(`${where}.${key}: expected a string, got ${describe(v)}`);
    return String(v);
  };
  const strMap = (key: string): Record<string, string> | undefined => {
    const v = entry[key];
    if (v === undefined || v === null) return undefined;
    if (!isObj(v)) throw usage(`${where}.${key}: expected a mapping of strings, got ${describe(v)}`);
    const out: Record<string, string> = {};
    for (const [k, val] of Object.entries(v)) {
      if (typeof val !== 'string' && typeof val !== 'number' && typeof val !== 'boolean') throw usage(`${where}.${key}.${k}: expected a string, got ${describe(val)}`);
      out[k.toLowerCase()] = String(val);
    }
    return out;
  };
  const to: Destination = { ...base.to };
  if (entry.to !== undefined || entry.toLabels !== undefined) {
    to.name = str('to');
    to.labels = strMap('toLabels');
  }
  if (entry.namespace !== undefined) to.namespace = str('namespace');
  const claims = entry.claims;
  if (claims !== undefined && !isObj(claims)) throw usage(`${where}.claims: expected a mapping of claims, got ${describe(claims)}`);
  const request: SimRequest = {
    ...base,
    label: str('name'),
    to,
    port: entry.port !== undefined ? portOf(entry.port, `${where}.port`) : base.port,
    method: str('method')?.toUpperCase() ?? base.method,
    path: str('path') ?? base.path,
    host: str('host') ?? base.host,
    headers: { ...base.headers, ...strMap('headers') },
    expect: entry.expect !== undefined ? expectationOf(entry.expect, `${where}.expect`) : undefined,
  };
  // A source or a token given by the entry replaces the command line's whole source or token.
  if (['from', 'principal', 'sourceNamespace', 'sourceIp'].some((k) => entry[k] !== undefined)) {
    Object.assign(request, { from: str('from'), principal: str('principal'), sourceNamespace: str('sourceNamespace'), sourceIp: str('sourceIp') });
  }
  if (['token', 'claims', 'issuer'].some((k) => entry[k] !== undefined)) {
    Object.assign(request, { token: str('token'), claims: claims as Obj | undefined, issuer: str('issuer') });
  }
  return checkRequest(request, where);
}

/** The consistency rules every request obeys, whatever it came from. */
export function checkRequest(r: SimRequest, where: string): SimRequest {
  if (!r.to.name && !r.to.labels) throw usage(`${where}: no destination: give --to <pod>[.<namespace>] or --to-labels with -n`);
  if (r.to.name && r.to.labels) throw usage(`${where}: --to and --to-labels both name the destination; give one`);
  if (!r.path.startsWith('/')) throw usage(`${where}: path ${JSON.stringify(r.path)} must start with /`);
  if (!/^[A-Z]+$/.test(r.method)) throw usage(`${where}: method ${JSON.stringify(r.method)} is not an HTTP method`);
  if (r.from && (r.principal || r.sourceNamespace)) throw usage(`${where}: --from gives the source identity; leave out --principal and --source-namespace`);
  if (r.principal && r.sourceNamespace) throw usage(`${where}: --principal already names the source namespace; leave out --source-namespace`);
  if (r.principal && !r.principal.startsWith('spiffe://')) throw usage(`${where}: principal ${JSON.stringify(r.principal)} must be a SPIFFE ID (spiffe://<trust domain>/ns/<ns>/sa/<sa>)`);
  if (r.sourceIp !== undefined && isIP(r.sourceIp) === 0) throw usage(`${where}: source IP ${JSON.stringify(r.sourceIp)} is not an IP address`);
  if (r.token && (r.claims || r.issuer)) throw usage(`${where}: give a token (--token) or claims (--claims with --issuer), not both`);
  if (r.issuer && !r.claims) throw usage(`${where}: --issuer goes with --claims`);
  if (r.claims && !r.issuer && typeof r.claims.iss !== 'string') throw usage(`${where}: claims need an issuer: --issuer, or an "iss" claim`);
  if (r.claims && r.issuer && r.claims.iss !== undefined && r.claims.iss !== r.issuer) throw usage(`${where}: --issuer ${r.issuer} and the "iss" claim ${JSON.stringify(r.claims.iss)} differ`);
  return r;
}

export function portOf(value: unknown, where: string): number {
  const n = typeof value === 'number' ? value : typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : NaN;
  if (!Number.isInteger(n) || n < 1 || n > 65535) throw usage(`${where}: ${JSON.stringify(value)} is not a port number (1 to 65535)`);
  return n;
}

/** `403`, or `{ status: 403, rule: "deny-admin.foo rule 0" }`. */
function expectationOf(value: unknown, where: string): Expectation {
  if (typeof value === 'number' || (typeof value === 'string' && /^\d+$/.test(value))) return { status: statusOf(value, where) };
  if (!isObj(value)) throw usage(`${where}: expected a status (200, 401, 403) or a mapping { status, rule }, got ${describe(value)}`);
  for (const key of Object.keys(value)) if (key !== 'status' && key !== 'rule') throw usage(`${where}.${key}: unknown field; expected status or rule`);
  const out: Expectation = {};
  if (value.status !== undefined) out.status = statusOf(value.status, `${where}.status`);
  if (value.rule !== undefined) {
    if (typeof value.rule !== 'string') throw usage(`${where}.rule: expected "<name>.<namespace> rule <n>" or "none", got ${describe(value.rule)}`);
    out.rule = value.rule;
  }
  return out;
}

function statusOf(value: unknown, where: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 100 || n > 599) throw usage(`${where}: ${JSON.stringify(value)} is not an HTTP status`);
  return n;
}

/** `{"sub":"alice"}` from --claims. */
export function parseClaims(text: string, where: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw usage(`${where}: not JSON: ${(err as Error).message}`);
  }
  if (!isObj(value)) throw usage(`${where}: expected a JSON object of claims, got ${describe(value)}`);
  return value;
}

/** `k=v` (repeatable) → lower-case names; the same name twice is joined with `,`, as the proxy joins repeated headers. */
export function parseHeaders(pairs: readonly string[], where: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw usage(`${where}: expected name=value, got ${JSON.stringify(pair)}`);
    const name = pair.slice(0, eq).trim().toLowerCase();
    const value = pair.slice(eq + 1);
    out[name] = out[name] === undefined ? value : `${out[name]},${value}`;
  }
  return out;
}

export function parseLabels(text: string, where: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of text.split(',').filter((p) => p !== '')) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw usage(`${where}: expected key=value pairs separated by commas, got ${JSON.stringify(pair)}`);
    out[pair.slice(0, eq).trim()] = pair.slice(eq + 1).trim();
  }
  if (Object.keys(out).length === 0) throw usage(`${where}: no labels given`);
  return out;
}

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function describe(v: unknown): string {
  if (Array.isArray(v)) return 'a list';
  if (v === null) return 'null';
  return typeof v === 'object' ? 'a mapping' : `${typeof v} ${JSON.stringify(v)}`;
}

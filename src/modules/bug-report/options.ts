import * as fs from 'node:fs';
import { parseDocument } from 'yaml';
import { Duration } from '../settings/duration';
import { UserError } from '../shared/user-error';
import { parsePodFilter, PodFilter } from './filter';
import { globRegExp } from './glob';

/** The flags of `bug-report` as the command parsed them (names as spec/03 writes them). */
export interface BugReportFlags {
  'critical-errs'?: string[];
  dir?: string;
  'dry-run'?: boolean;
  duration?: Duration;
  'end-time'?: string;
  exclude?: string[];
  filename?: string;
  'full-secrets'?: boolean;
  'ignore-errs'?: string[];
  include?: string[];
  'mesh-namespace'?: string;
  'output-dir'?: string;
  'rq-concurrency'?: number;
  'start-time'?: string;
  timeout?: Duration;
}

/** What one run gathers and where it goes, checked. */
export interface BugReportOptions {
  criticalErrs: RegExp[];
  ignoreErrs: RegExp[];
  /** Where the files are staged before archiving. */
  dir?: string;
  dryRun: boolean;
  /** Log lines from (inclusive); none: from the start of the log. */
  since?: Date;
  /** Log lines up to (inclusive). */
  until: Date;
  include: PodFilter[];
  exclude: PodFilter[];
  fullSecrets: boolean;
  meshNamespace: string;
  outputDir: string;
  /** Requests in flight at most (`--rq-concurrency`, 0 meaning 32). */
  concurrency: number;
  timeoutMs: number;
}

export const DEFAULT_CONCURRENCY = 32;
const MAX_CONFIG_BYTES = 1024 * 1024;
const STRING_KEYS = ['dir', 'end-time', 'mesh-namespace', 'output-dir', 'start-time'] as const;
const LIST_KEYS = ['critical-errs', 'exclude', 'ignore-errs', 'include'] as const;
const BOOL_KEYS = ['dry-run', 'full-secrets'] as const;
const DURATION_KEYS = ['duration', 'timeout'] as const;
const INT_KEYS = ['rq-concurrency'] as const;

/**
 * The run's options: `flags`, with the YAML config file of `-f` applied over them (a key there
 * replaces the flag's value; lists are replaced, not appended), then checked.
 * @throws UserError naming the flag, file or key that is wrong.
 */
export function bugReportOptions(flags: BugReportFlags, now = new Date(), cwd = process.cwd()): BugReportOptions {
  const f: BugReportFlags = { ...flags, ...(flags.filename ? readConfigFile(flags.filename) : {}) };
  const start = f['start-time'] ? parseTime(f['start-time'], '--start-time') : undefined;
  const end = f['end-time'] ? parseTime(f['end-time'], '--end-time') : now;
  const duration = f.duration ?? Duration.ZERO;
  if (start && duration.nanos > 0n) throw new UserError('--start-time and --duration cannot be used together');
  if (duration.nanos < 0n) throw new UserError(`--duration must not be negative, got ${duration}`);
  if (start && start > end) throw new UserError(`--start-time ${f['start-time']} is after the end time ${end.toISOString()}`);
  const concurrency = f['rq-concurrency'] ?? 0;
  if (!Number.isInteger(concurrency) || concurrency < 0) throw new UserError(`--rq-concurrency must be 0 or more, got ${concurrency}`);
  const timeout = f.timeout ?? Duration.parse('30m');
  if (timeout.nanos <= 0n) throw new UserError(`--timeout must be positive, got ${timeout}`);
  const meshNamespace = f['mesh-namespace'] || 'mesh-system';
  return {
    criticalErrs: (f['critical-errs'] ?? []).map((g) => globRegExp(`*${g}*`, 'i')),
    ignoreErrs: (f['ignore-errs'] ?? []).map((g) => globRegExp(`*${g}*`, 'i')),
    dir: f.dir,
    dryRun: !!f['dry-run'],
    since: start ?? (duration.nanos > 0n ? new Date(end.getTime() - duration.milliseconds) : undefined),
    until: end,
    include: (f.include ?? []).map((t) => parsePodFilter(t, '--include')),
    exclude: (f.exclude ?? []).map((t) => parsePodFilter(t, '--exclude')),
    fullSecrets: !!f['full-secrets'],
    meshNamespace,
    outputDir: f['output-dir'] || cwd,
    concurrency: concurrency === 0 ? DEFAULT_CONCURRENCY : concurrency,
    timeoutMs: timeout.milliseconds,
  };
}

/** RFC 3339 (`2024-01-02T03:04:05Z`, fraction and offset allowed). */
function parseTime(text: string, flag: string): Date {
  const ok = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i.test(text);
  const t = ok ? new Date(Date.parse(text)) : undefined;
  if (!t || Number.isNaN(t.getTime())) throw new UserError(`${flag} ${JSON.stringify(text)} is not an RFC 3339 time such as 2024-01-02T15:04:05Z`);
  return t;
}

/** The keys of a `-f` file as flag values; unknown keys and wrong types are errors naming the file and key. */
function readConfigFile(file: string): BugReportFlags {
  let text: string;
  try {
    const stat = fs.statSync(file);
    if (!stat.isFile()) throw new UserError(`config file ${file} is not a file`);
    if (stat.size > MAX_CONFIG_BYTES) throw new UserError(`config file ${file} is larger than ${MAX_CONFIG_BYTES} bytes`);
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if (err instanceof UserError) throw err;
    throw new UserError(`cannot read config file ${file}: ${(err as Error).message}`);
  }
  const doc = parseDocument(text, { uniqueKeys: true });
  if (doc.errors.length > 0) throw new UserError(`config file ${file} is not valid YAML: ${doc.errors[0].message.split('\n')[0]}`);
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 100 });
  } catch (err) {
    throw new UserError(`config file ${file}: ${(err as Error).message.split('\n')[0]}`);
  }
  if (value === null || value === undefined) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw new UserError(`config file ${file} must be a map of bug-report flag names to values`);
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
    const where = `config file ${file}: ${key}`;
    if ((STRING_KEYS as readonly string[]).includes(key)) {
      if (typeof v !== 'string') throw new UserError(`${where} must be a string`);
      out[key] = v;
    } else if ((LIST_KEYS as readonly string[]).includes(key)) {
      if (!Array.isArray(v) || v.some((e) => typeof e !== 'string')) throw new UserError(`${where} must be a list of strings`);
      out[key] = v;
    } else if ((BOOL_KEYS as readonly string[]).includes(key)) {
      if (typeof v !== 'boolean') throw new UserError(`${where} must be true or false`);
      out[key] = v;
    } else if ((DURATION_KEYS as readonly string[]).includes(key)) {
      try {
        out[key] = Duration.parse(String(v));
      } catch {
        throw new UserError(`${where} must be a duration such as 30s or 5m0s, got ${JSON.stringify(v)}`);
      }
    } else if ((INT_KEYS as readonly string[]).includes(key)) {
      if (!Number.isInteger(v)) throw new UserError(`${where} must be an integer`);
      out[key] = v;
    } else {
      throw new UserError(`config file ${file}: unknown key ${JSON.stringify(key)}; the keys are the flag names of bug-report (${[...STRING_KEYS, ...LIST_KEYS, ...BOOL_KEYS, ...DURATION_KEYS, ...INT_KEYS].sort().join(', ')})`);
    }
  }
  return out as BugReportFlags;
}

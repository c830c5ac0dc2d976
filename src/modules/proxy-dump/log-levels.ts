/**
 * `proxy-config log`: what `--level` and `--reset` ask of a proxy's admin `/logging`, the
 * requests that do it (every logger first, then single ones, as the reference sends them), and
 * the "active loggers" answer read back into levels.
 */
import { ENVOY_LOG_LEVELS, EnvoyLogLevel, isEnvoyLogLevel } from '../envoy/log-levels';
import { UserError } from '../shared/user-error';

/** The level `--reset` puts every logger back to (the proxy's default). */
export const RESET_LEVEL: EnvoyLogLevel = 'warning';

/** The reference's name for "every logger" in `--level level:debug`. */
const ALL_LOGGERS = 'level';

export interface LevelChange {
  /** Every logger's level, set before the single ones. */
  all?: EnvoyLogLevel;
  /** Single loggers, in the order given (the last of a repeated name wins). */
  loggers: Map<string, EnvoyLogLevel>;
}

export function isEmptyChange(change: LevelChange): boolean {
  return change.all === undefined && change.loggers.size === 0;
}

function level(text: string, flag: string): EnvoyLogLevel {
  const l = text.trim().toLowerCase();
  if (l === 'warn') return 'warning';
  if (isEnvoyLogLevel(l)) return l;
  throw new UserError(`${flag}: unrecognized logging level ${JSON.stringify(text)}; levels are ${ENVOY_LOG_LEVELS.join(', ')}`);
}

/**
 * `--level`: one `<level>` for every logger, or `[<logger>:]<level>,...` (`=` works as `:`, and
 * a fine-grain `<path>::<logger>:<level>` keeps its last part). Errors name the flag and part.
 */
export function parseLevelFlag(text: string): LevelChange {
  const flag = `--level ${JSON.stringify(text)}`;
  const change: LevelChange = { loggers: new Map() };
  for (const part of text.split(',').map((p) => p.trim())) {
    if (part === '') continue;
    const item = part.split('::').pop()!;
    const sep = item.search(/[:=]/);
    if (sep < 0) {
      change.all = level(item, flag);
      continue;
    }
    const name = item.slice(0, sep).trim();
    const value = item.slice(sep + 1);
    if (name === '') throw new UserError(`${flag}: ${JSON.stringify(part)} has no logger name before its level`);
    if (value.trim() === '') throw new UserError(`${flag}: ${JSON.stringify(part)} has no level after the logger name`);
    if (!/^[A-Za-z0-9_./*-]+$/.test(name)) throw new UserError(`${flag}: ${JSON.stringify(name)} is not a logger name`);
    if (name === ALL_LOGGERS) change.all = level(value, flag);
    else {
      change.loggers.delete(name);
      change.loggers.set(name, level(value, flag));
    }
  }
  return change;
}

/** The admin paths to POST, in order: `/logging?level=<l>` for every logger, then one per logger. */
export function levelRequests(change: LevelChange): string[] {
  const paths: string[] = [];
  if (change.all !== undefined) paths.push(`/logging?level=${change.all}`);
  for (const [name, l] of change.loggers) paths.push(`/logging?${encodeURIComponent(name)}=${l}`);
  return paths;
}

/** The loggers and levels of an admin `/logging` answer ("active loggers:" then `  <name>: <level>`). */
export function parseActiveLoggers(body: string, source: string): Map<string, string> {
  const lines = body.split('\n');
  const start = lines.findIndex((l) => l.trim() === 'active loggers:');
  if (start < 0) throw new UserError(`${source}: the admin /logging answer has no "active loggers:" list`);
  const loggers = new Map<string, string>();
  for (const line of lines.slice(start + 1)) {
    const m = /^\s+(\S+): (\S+)\s*$/.exec(line);
    if (m) loggers.set(m[1], m[2]);
  }
  return loggers;
}

/** Every logger `change` names must be one the proxy has; the error names them and the pod. */
export function checkLoggerNames(change: LevelChange, known: ReadonlyMap<string, string>, source: string): void {
  const unknown = [...change.loggers.keys()].filter((n) => !known.has(n));
  if (unknown.length > 0) {
    throw new UserError(`unrecognized logger name${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')} for ${source}; its loggers are ${[...known.keys()].join(', ')}`);
  }
}

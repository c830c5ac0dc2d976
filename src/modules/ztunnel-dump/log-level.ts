import { UserError } from '../shared/user-error';

/**
 * The levels `--level` takes (those of `proxy-config log`, plus `warn`), in ztunnel's words:
 * ztunnel's filter knows trace, debug, info, warn, error and off.
 */
const ZTUNNEL_LEVELS: Record<string, string> = {
  trace: 'trace',
  debug: 'debug',
  info: 'info',
  warning: 'warn',
  warn: 'warn',
  error: 'error',
  critical: 'error',
  off: 'off',
};

const LEVEL_NAMES = 'trace, debug, info, warning, error, critical, off';
const LOGGER = /^[A-Za-z0-9_.-]+(::[A-Za-z0-9_.-]+)*$/;

/** The reference's name for "every logger" in `--level level:debug`. */
const ALL_LOGGERS = 'level';

function ztunnelLevel(level: string, item: string): string {
  const mapped = ZTUNNEL_LEVELS[level.trim().toLowerCase()];
  if (!mapped) throw new UserError(`--level: unrecognized logging level ${JSON.stringify(level)} in ${JSON.stringify(item)}; levels are ${LEVEL_NAMES}`);
  return mapped;
}

/**
 * `--level` (`<level>`, or `[<logger>:]<level>,...`, parsed as `proxy-config log` parses it:
 * `=` works as `:`, levels in any case, empty parts skipped, `level:<level>` sets every logger)
 * as the filter directives ztunnel's `/logging?level=` takes: `<level>` sets the default,
 * `<target>=<level>` one target (a log scope such as `access`, or a Rust module path such as
 * `ztunnel::proxy`, kept whole since ztunnel's targets are module paths).
 */
export function ztunnelLogDirectives(levelFlag: string): string {
  return levelFlag
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '')
    .map((item) => {
      const sep = Math.max(item.lastIndexOf(':'), item.lastIndexOf('='));
      if (sep < 0) return ztunnelLevel(item, item);
      const logger = item.slice(0, sep).trim();
      const level = ztunnelLevel(item.slice(sep + 1), item);
      if (logger === ALL_LOGGERS) return level;
      if (!LOGGER.test(logger)) throw new UserError(`--level: ${JSON.stringify(logger)} in ${JSON.stringify(item)} is not a logger name (a name such as access, or a module path such as ztunnel::proxy)`);
      return `${logger}=${level}`;
    })
    .join(',');
}

/** What `ztunnel-config log` asks of ztunnel's `/logging`. */
export interface LogRequest {
  /** The query of `POST /logging`: empty lists the levels. */
  query: string;
}

/**
 * `POST /logging` lists the levels (also for a `--level` with no level in it);
 * `?level=<directives>` adds directives to the current filter; `--reset` restores ztunnel's start-up filter with the default level at warning.
 */
export function ztunnelLogRequest(flags: { level?: string; reset?: boolean }): LogRequest {
  if (flags.reset && flags.level) throw new UserError('--level cannot be combined with --reset');
  if (flags.reset) return { query: 'reset&level=warn' };
  const directives = flags.level === undefined ? '' : ztunnelLogDirectives(flags.level);
  return { query: directives ? new URLSearchParams({ level: directives }).toString() : '' };
}

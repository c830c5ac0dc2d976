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

function ztunnelLevel(level: string, item: string): string {
  const mapped = ZTUNNEL_LEVELS[level];
  if (!mapped) throw new UserError(`--level: unrecognized logging level ${JSON.stringify(level)} in ${JSON.stringify(item)}; levels are ${LEVEL_NAMES}`);
  return mapped;
}

/**
 * `--level` (`<level>`, or `[<logger>:]<level>,...`) as the filter directives ztunnel's
 * `/logging?level=` takes: `<level>` sets the default, `<target>=<level>` one target (a Rust
 * module path such as `ztunnel::proxy`, or a log scope such as `access`).
 */
export function ztunnelLogDirectives(levelFlag: string): string {
  return levelFlag
    .split(',')
    .map((item) => {
      const sep = Math.max(item.lastIndexOf(':'), item.lastIndexOf('='));
      if (sep < 0) return ztunnelLevel(item, item);
      const logger = item.slice(0, sep);
      const level = ztunnelLevel(item.slice(sep + 1), item);
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
 * `POST /logging` lists the levels; `?level=<directives>` adds directives to the current
 * filter; `--reset` restores ztunnel's start-up filter with the default level at warning.
 */
export function ztunnelLogRequest(flags: { level?: string; reset?: boolean }): LogRequest {
  if (flags.reset && flags.level) throw new UserError('--level cannot be combined with --reset');
  if (flags.reset) return { query: 'reset&level=warn' };
  if (flags.level !== undefined) return { query: new URLSearchParams({ level: ztunnelLogDirectives(flags.level) }).toString() };
  return { query: '' };
}

/**
 * The built-in proxy's named loggers, as Envoy has them (one per component, each with its own
 * level, changed at run time through the admin `/logging`). A message below its logger's level
 * is dropped before it is formatted; the rest go to one sink as records.
 */
import { envoyLevelRank, EnvoyLogLevel } from '../../envoy/log-levels';

/**
 * The loggers the built-in proxy's code logs through (Envoy's names for the same components):
 * admin (admin port), config (xDS streams, config applied or rejected), connection (listeners,
 * TLS handshakes), ext_authz (ext_authz filters), filter (network filters, tcp_proxy, filters without a logger of their own),
 * http (connection manager, one line per request), jwt (jwt_authn), main (start, ready), misc,
 * rbac (both RBAC filters), router (route picked, upstream answer), secret (SDS), upstream
 * (clusters and endpoints).
 */
export const BUILTIN_PROXY_LOGGERS = ['admin', 'config', 'connection', 'ext_authz', 'filter', 'http', 'jwt', 'main', 'misc', 'rbac', 'router', 'secret', 'upstream'] as const;
export type ProxyLoggerName = (typeof BUILTIN_PROXY_LOGGERS)[number];

/** The level every logger starts at unless told otherwise (`--proxyLogLevel` default). */
export const DEFAULT_PROXY_LOG_LEVEL: EnvoyLogLevel = 'warning';

export interface ProxyLogRecord {
  time: Date;
  level: Exclude<EnvoyLogLevel, 'off'>;
  logger: string;
  message: string;
}

export type ProxyLogSink = (record: ProxyLogRecord) => void;

/** The older call form inside the proxy (`warn` for Envoy's `warning`). */
export type ProxyLog = (level: 'debug' | 'info' | 'warn' | 'error', message: string) => void;

type Message = string | (() => string);

export class ProxyLogger {
  constructor(
    readonly name: string,
    private current: EnvoyLogLevel,
    private readonly sink: ProxyLogSink,
    private readonly clock: () => Date,
  ) {}

  get level(): EnvoyLogLevel {
    return this.current;
  }

  setLevel(level: EnvoyLogLevel): void {
    this.current = level;
  }

  enabled(level: Exclude<EnvoyLogLevel, 'off'>): boolean {
    return this.current !== 'off' && envoyLevelRank(level) >= envoyLevelRank(this.current);
  }

  log(level: Exclude<EnvoyLogLevel, 'off'>, message: Message): void {
    if (!this.enabled(level)) return;
    this.sink({ time: this.clock(), level, logger: this.name, message: typeof message === 'function' ? message() : message });
  }

  trace(message: Message): void {
    this.log('trace', message);
  }
  debug(message: Message): void {
    this.log('debug', message);
  }
  info(message: Message): void {
    this.log('info', message);
  }
  warn(message: Message): void {
    this.log('warning', message);
  }
  error(message: Message): void {
    this.log('error', message);
  }
  critical(message: Message): void {
    this.log('critical', message);
  }

  /** This logger in the `(level, message)` form the proxy's parts take. */
  asLog(): ProxyLog {
    return (level, message) => this.log(level === 'warn' ? 'warning' : level, message);
  }
}

export class UnknownProxyLoggerError extends Error {}

/** All the proxy's loggers; names outside BUILTIN_PROXY_LOGGERS do not exist. */
export class ProxyLoggers {
  private readonly loggers = new Map<string, ProxyLogger>();
  private readonly changeListeners: Array<() => void> = [];

  constructor(
    sink: ProxyLogSink,
    level: EnvoyLogLevel = DEFAULT_PROXY_LOG_LEVEL,
    clock: () => Date = () => new Date(),
  ) {
    for (const name of BUILTIN_PROXY_LOGGERS) this.loggers.set(name, new ProxyLogger(name, level, sink, clock));
  }

  has(name: string): boolean {
    return this.loggers.has(name);
  }

  get(name: ProxyLoggerName): ProxyLogger {
    return this.loggers.get(name)!;
  }

  /** Every logger and its level, in name order (as Envoy's admin lists them). */
  levels(): { name: string; level: EnvoyLogLevel }[] {
    return [...this.loggers.values()].map((l) => ({ name: l.name, level: l.level }));
  }

  /** Called after levels change (the agent passes them on to its proxy workers). */
  onChange(listener: () => void): void {
    this.changeListeners.push(listener);
  }

  setAll(level: EnvoyLogLevel): void {
    for (const l of this.loggers.values()) l.setLevel(level);
    for (const listener of this.changeListeners) listener();
  }

  /** All or nothing: one unknown name changes no level. */
  set(changes: ReadonlyMap<string, EnvoyLogLevel>): void {
    const unknown = [...changes.keys()].filter((n) => !this.loggers.has(n));
    if (unknown.length > 0) throw new UnknownProxyLoggerError(`unknown logger name ${unknown.join(', ')}`);
    for (const [name, level] of changes) this.loggers.get(name)!.setLevel(level);
    for (const listener of this.changeListeners) listener();
  }
}

/**
 * A record in the text form the agent gives Envoy (`--log-format`), without the source
 * location and thread Envoy adds: `<time>\t<level>\tenvoy <logger>\t<message>`.
 */
export function envoyTextLine(record: ProxyLogRecord): string {
  const time = record.time.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
  return `${time}\t${record.level}\tenvoy ${record.logger}\t${record.message}\n`;
}

/** Where the proxy writes when nobody says otherwise: its process's stderr, as Envoy does. */
export const stderrProxyLogSink: ProxyLogSink = (record) => void process.stderr.write(envoyTextLine(record));


/** The logger a filter logs through, by its Envoy extension name. */
export function loggerForFilter(filterName: string): ProxyLoggerName {
  if (filterName.includes('jwt_authn')) return 'jwt';
  if (filterName.includes('rbac')) return 'rbac';
  if (filterName.includes('ext_authz')) return 'ext_authz';
  if (filterName.endsWith('.router')) return 'router';
  return 'filter';
}

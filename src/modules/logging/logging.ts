import { Program } from '../settings/types';
import { ALL_SCOPES, DEFAULT_SCOPE, Level, levelRank } from './levels';
import { defaultLoggingOptions, LoggingOptions } from './options';
import { LogSink, openSink } from './sink';

export type LogFields = Record<string, unknown>;

export const LoggingToken = Symbol.for('mesh.Logging');

/** A logger for one scope; cheap to call when its level is off. */
export class ScopedLogger {
  constructor(
    readonly scope: string,
    private readonly logging: Logging,
  ) {}

  enabled(level: Level): boolean {
    return this.logging.enabled(this.scope, level);
  }
  debug(msg: string, fields?: LogFields): void {
    this.logging.emit(this.scope, 'debug', msg, fields);
  }
  info(msg: string, fields?: LogFields): void {
    this.logging.emit(this.scope, 'info', msg, fields);
  }
  warn(msg: string, fields?: LogFields): void {
    this.logging.emit(this.scope, 'warn', msg, fields);
  }
  error(msg: string, fields?: LogFields): void {
    this.logging.emit(this.scope, 'error', msg, fields);
  }
  fatal(msg: string, fields?: LogFields): void {
    this.logging.emit(this.scope, 'fatal', msg, fields);
  }
}

/** The program's logging: scoped loggers, per-scope levels, console or JSON lines, several targets. */
export class Logging {
  private options: LoggingOptions;
  private sinks: LogSink[] = [];
  private readonly loggers = new Map<string, ScopedLogger>();

  constructor(
    readonly program: Program,
    private readonly clock: () => Date = () => new Date(),
  ) {
    this.options = defaultLoggingOptions(program);
  }

  /** Applies parsed logging flags; opens the targets (a file that cannot be opened is an error). */
  configure(options: LoggingOptions): void {
    const sinks = options.targets.map(openSink);
    this.close();
    this.options = options;
    this.sinks = sinks;
  }

  scope(name: string): ScopedLogger {
    if (name === ALL_SCOPES) throw new Error(`"${ALL_SCOPES}" addresses every scope and cannot log`);
    let logger = this.loggers.get(name);
    if (!logger) {
      logger = new ScopedLogger(name, this);
      this.loggers.set(name, logger);
    }
    return logger;
  }

  enabled(scope: string, level: Level): boolean {
    const min = this.options.outputLevels.get(scope) ?? this.options.defaultOutputLevel;
    return min !== 'none' && level !== 'none' && levelRank(level) >= levelRank(min);
  }

  emit(scope: string, level: Level, msg: string, fields?: LogFields): void {
    if (!this.enabled(scope, level)) return;
    if (this.sinks.length === 0) this.sinks = this.options.targets.map(openSink);
    const stackMin = this.options.stacktraceLevels.get(scope) ?? this.options.defaultStacktraceLevel;
    const stack = stackMin !== 'none' && levelRank(level) >= levelRank(stackMin) ? callerStack() : undefined;
    const caller = this.options.callerScopes.has(scope) ? callerOf() : undefined;
    const record: LogRecord = { time: this.clock(), scope, level, msg, fields, caller, stack };
    const line = this.options.asJson ? jsonLine(record) : consoleLine(record);
    for (const sink of this.sinks) sink.write(line);
  }

  close(): void {
    for (const s of this.sinks) s.close();
    this.sinks = [];
  }
}

interface LogRecord {
  time: Date;
  scope: string;
  level: Level;
  msg: string;
  fields?: LogFields;
  caller?: string;
  stack?: string;
}

/** The incumbent's console form: time, level, scope (omitted for default), message, fields. */
function consoleLine(r: LogRecord): string {
  const parts = [timestamp(r.time), r.level];
  if (r.scope !== DEFAULT_SCOPE) parts.push(r.scope);
  if (r.caller) parts.push(r.caller);
  parts.push(r.msg);
  let line = parts.join('\t');
  if (r.fields) for (const [k, v] of Object.entries(r.fields)) line += `\t${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`;
  if (r.stack) line += '\n' + r.stack;
  return line + '\n';
}

function jsonLine(r: LogRecord): string {
  const out: Record<string, unknown> = { level: r.level, time: timestamp(r.time), scope: r.scope, msg: r.msg };
  if (r.caller) out.caller = r.caller;
  if (r.fields) for (const [k, v] of Object.entries(r.fields)) if (!(k in out)) out[k] = v;
  if (r.stack) out.stack = r.stack;
  return JSON.stringify(out) + '\n';
}

/** RFC 3339 with microseconds, as the incumbent writes (JS clocks give milliseconds). */
function timestamp(time: Date): string {
  return time.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/** Frames outside this logging module: the first is the caller. */
function externalFrames(): string[] {
  const frames = (new Error().stack ?? '').split('\n').slice(1);
  return frames.filter((f) => !f.includes(__filename) && !f.includes('logging.js'));
}

function callerOf(): string | undefined {
  const frame = externalFrames()[0];
  const m = frame && /\(?([^()\s]+):(\d+):\d+\)?$/.exec(frame.trim());
  if (!m) return undefined;
  const file = m[1].split('/').slice(-2).join('/');
  return `${file}:${m[2]}`;
}

function callerStack(): string {
  return externalFrames()
    .map((f) => f.trim())
    .join('\n');
}

import { Program } from '../settings/types';
import { ALL_SCOPES, DEFAULT_SCOPE, Level, levelRank, PROGRAM_SCOPES } from './levels';
import { defaultLoggingOptions, LoggingOptions } from './options';
import { SCOPE_DESCRIPTIONS } from './scope-descriptions';
import { LogSink, openSink } from './sink';

export type LogFields = Record<string, unknown>;

/** One scope as it logs now: what the introspection facility shows and changes. */
export interface ScopeState {
  name: string;
  description: string;
  outputLevel: Level;
  stackTraceLevel: Level;
  logCallers: boolean;
}

/** A scope the program neither declares nor has created. */
export class UnknownScopeError extends Error {
  constructor(readonly scope: string) {
    super(`unknown scope "${scope}"`);
  }
}

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

  /**
   * The program's scopes: those it declares (spec/01, spec/02) and any created at run time,
   * sorted by name. `all` is not among them: it addresses every scope at once.
   */
  scopeNames(): string[] {
    const names = new Set(PROGRAM_SCOPES[this.program].filter((s) => s !== ALL_SCOPES));
    for (const name of this.loggers.keys()) names.add(name);
    return [...names].sort();
  }

  /** How `name` logs now; undefined for a scope the program does not know. */
  scopeState(name: string): ScopeState | undefined {
    if (!this.knows(name)) return undefined;
    return {
      name,
      description: SCOPE_DESCRIPTIONS[name] ?? '',
      outputLevel: this.options.outputLevels.get(name) ?? this.options.defaultOutputLevel,
      stackTraceLevel: this.options.stacktraceLevels.get(name) ?? this.options.defaultStacktraceLevel,
      logCallers: this.options.callerScopes.has(name),
    };
  }

  /** Changes a scope's minimum output level from now on (the live `--log_output_level`). */
  setOutputLevel(scope: string, level: Level): void {
    this.mustKnow(scope);
    this.options.outputLevels.set(scope, level);
  }

  /** Changes the level from which a scope's messages carry a stack trace (`none` = never). */
  setStackTraceLevel(scope: string, level: Level): void {
    this.mustKnow(scope);
    this.options.stacktraceLevels.set(scope, level);
  }

  /** Whether a scope's messages carry the caller's file and line. */
  setLogCallers(scope: string, on: boolean): void {
    this.mustKnow(scope);
    if (on) this.options.callerScopes.add(scope);
    else this.options.callerScopes.delete(scope);
  }

  private knows(name: string): boolean {
    return name !== ALL_SCOPES && (this.loggers.has(name) || PROGRAM_SCOPES[this.program].includes(name));
  }

  private mustKnow(name: string): void {
    if (!this.knows(name)) throw new UnknownScopeError(name);
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

import { Program } from '../settings/types';
import { ALL_SCOPES, DEFAULT_SCOPE, isLevel, Level, LEVELS, PROGRAM_SCOPES } from './levels';
import { UserError } from '../shared/user-error';

export interface LoggingOptions {
  asJson: boolean;
  /** Scopes whose messages carry the caller's file and line. */
  callerScopes: Set<string>;
  /** Minimum level written, per scope; scopes not listed use `defaultOutputLevel`. */
  outputLevels: Map<string, Level>;
  defaultOutputLevel: Level;
  /** Level from which a stack trace is attached, per scope (`none` = never). */
  stacktraceLevels: Map<string, Level>;
  defaultStacktraceLevel: Level;
  /** `stdout`, `stderr`, or file paths. */
  targets: string[];
  /** klog-style verbosity (`--vklog`); above 0 the klog scope logs at debug. */
  vklog: number;
}

/** Raw flag values as the logging flags deliver them. */
export interface LoggingFlagValues {
  log_as_json?: boolean;
  log_caller?: string;
  log_output_level?: string;
  log_stacktrace_level?: string;
  log_target?: string[];
  vklog?: number;
}

export class LoggingOptionError extends UserError {}

export function defaultLoggingOptions(program: Program): LoggingOptions {
  return {
    asJson: false,
    callerScopes: new Set(),
    outputLevels: new Map(),
    defaultOutputLevel: 'info',
    stacktraceLevels: new Map(),
    defaultStacktraceLevel: 'none',
    // meshctl's stdout is its output; its log lines go to stderr.
    targets: [program === 'meshctl' ? 'stderr' : 'stdout'],
    vklog: 0,
  };
}

/** Turns the logging flags into options; unknown scopes and levels are errors naming the flag. */
export function parseLoggingOptions(program: Program, flags: LoggingFlagValues): LoggingOptions {
  const options = defaultLoggingOptions(program);
  const scopes = PROGRAM_SCOPES[program];
  options.asJson = flags.log_as_json ?? false;
  if (flags.log_caller) {
    for (const s of splitList(flags.log_caller)) {
      checkScope('--log_caller', s, scopes);
      if (s === ALL_SCOPES) scopes.forEach((x) => options.callerScopes.add(x));
      else options.callerScopes.add(s);
    }
  }
  const out = parseScopedLevels('--log_output_level', flags.log_output_level ?? '', scopes);
  options.outputLevels = out.levels;
  if (out.all) options.defaultOutputLevel = out.all;
  const st = parseScopedLevels('--log_stacktrace_level', flags.log_stacktrace_level ?? 'default:none', scopes);
  options.stacktraceLevels = st.levels;
  if (st.all) options.defaultStacktraceLevel = st.all;
  if (flags.log_target && flags.log_target.length > 0) {
    options.targets = flags.log_target.map((t) => t.trim()).filter((t) => t !== '');
    if (options.targets.length === 0) throw new LoggingOptionError('--log_target: no output path given');
  }
  if (flags.vklog !== undefined) {
    if (!Number.isInteger(flags.vklog) || flags.vklog < 0) {
      throw new LoggingOptionError(`--vklog: invalid verbosity ${flags.vklog}; expected a whole number from 0`);
    }
    options.vklog = flags.vklog;
    if (flags.vklog > 0 && !options.outputLevels.has('klog')) options.outputLevels.set('klog', 'debug');
  }
  return options;
}

function parseScopedLevels(flag: string, text: string, scopes: readonly string[]) {
  const levels = new Map<string, Level>();
  let all: Level | undefined;
  for (const item of splitList(text)) {
    const colon = item.lastIndexOf(':');
    // A bare level applies to the default scope, as in the incumbent.
    const scope = colon < 0 ? DEFAULT_SCOPE : item.slice(0, colon);
    const level = colon < 0 ? item : item.slice(colon + 1);
    checkScope(flag, scope, scopes);
    if (!isLevel(level)) {
      throw new LoggingOptionError(`${flag}: invalid level "${level}" in "${item}"; levels are ${LEVELS.join(', ')}`);
    }
    if (scope === ALL_SCOPES) {
      all = level;
      levels.clear();
    } else levels.set(scope, level);
  }
  return { levels, all };
}

function checkScope(flag: string, scope: string, scopes: readonly string[]): void {
  if (!scopes.includes(scope)) {
    throw new LoggingOptionError(`${flag}: unknown scope "${scope}"; scopes are ${scopes.join(', ')}`);
  }
}

function splitList(text: string): string[] {
  return text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

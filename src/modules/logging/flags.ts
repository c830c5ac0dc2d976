import { Flags } from '@oclif/core';

/** The logging flags of spec/01 and spec/02, shared by every program that lists them. */
export const loggingFlags = {
  log_as_json: Flags.boolean({ description: 'whether to format output as JSON or in plain console-friendly format', default: false }),
  log_caller: Flags.string({
    description: 'comma-separated list of scopes for which to include caller information, scopes can be any of the program\'s scopes',
    default: '',
  }),
  log_output_level: Flags.string({
    description: 'comma-separated minimum per-scope logging level of messages to output, in the form of <scope>:<level>,<scope>:<level>,... where level is one of debug, info, warn, error, fatal, none',
    default: '',
  }),
  log_stacktrace_level: Flags.string({
    description: 'comma-separated minimum per-scope logging level at which stack traces are captured, in the form of <scope>:<level>,<scope:level>,...',
    default: 'default:none',
  }),
  log_target: Flags.string({
    description: 'the set of paths where to output the log; this can be any path as well as the special values stdout and stderr',
    multiple: true,
    delimiter: ',',
    default: ['stdout'],
  }),
};

export const vklogFlag = {
  vklog: Flags.integer({ description: 'number for the log level verbosity; like -v flags (0 = quiet)', default: 0, min: 0 }),
};

/**
 * The scopes API of the introspection facility, as it travels: `GET /scopej/` lists every
 * scope, `GET /scopej/<name>` one, `PUT /scopej/<name>` with some of the fields changes that
 * scope (202 Accepted and the scope as it is now). The incumbent's field names, so its tools work.
 */
export interface ScopeInfo {
  name: string;
  description: string;
  output_level: string;
  stack_trace_level: string;
  log_callers: boolean;
}

/** The levels a scope can be set to over the API (`fatal` is reserved to the flags). */
export const SETTABLE_LEVELS = ['none', 'error', 'warn', 'info', 'debug'] as const;
export type SettableLevel = (typeof SETTABLE_LEVELS)[number];

export function isSettableLevel(value: unknown): value is SettableLevel {
  return typeof value === 'string' && (SETTABLE_LEVELS as readonly string[]).includes(value);
}

/** The body of a PUT: each field given is changed, the others stay. */
export interface ScopeUpdate {
  output_level?: SettableLevel;
  stack_trace_level?: SettableLevel;
  log_callers?: boolean;
}

/** Where the scopes API lives on the ControlZ port. */
export const SCOPES_API_PATH = '/scopej';

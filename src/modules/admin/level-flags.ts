import { isSettableLevel, ScopeUpdate, SETTABLE_LEVELS, SettableLevel } from '../ctrlz/scope-info';
import { UserError } from '../shared/user-error';

/** Every scope of the daemon: a bare level (`--level debug`) or `all:<level>`. */
export const EVERY_SCOPE = '*';

/** `--level` / `--stack-trace-level` as given: per scope (or EVERY_SCOPE), the level to set. */
export type ScopeLevels = Map<string, SettableLevel>;

/**
 * Parses `<scope>:<level>,...` (or one bare level for every scope). Levels are checked here,
 * before anything is asked of a daemon; scope names are checked against each daemon's scopes.
 */
export function parseScopeLevels(flag: string, text: string): ScopeLevels {
  const levels: ScopeLevels = new Map();
  const items = text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (items.length === 0) throw new UserError(`${flag}: no level given; expected <scope>:<level>,... or one level for every scope (levels: ${SETTABLE_LEVELS.join(', ')})`);
  for (const item of items) {
    const colon = item.lastIndexOf(':');
    const scope = colon < 0 ? EVERY_SCOPE : item.slice(0, colon).trim();
    const level = (colon < 0 ? item : item.slice(colon + 1)).trim();
    if (scope === '') throw new UserError(`${flag}: missing scope before ":" in ${JSON.stringify(item)}`);
    if (!isSettableLevel(level)) {
      throw new UserError(`${flag}: invalid level ${JSON.stringify(level)} in ${JSON.stringify(item)}; levels are ${SETTABLE_LEVELS.join(', ')}`);
    }
    levels.set(scope === 'all' ? EVERY_SCOPE : scope, level);
  }
  return levels;
}

/** What to change on one daemon: per scope, the fields to PUT. */
export type ScopeChanges = Map<string, ScopeUpdate>;

/**
 * The changes for a daemon with `scopes`: EVERY_SCOPE expands to each of them, a named scope
 * wins over it. @throws UserError naming a scope the daemon does not have (`where` names it).
 */
export function changesFor(scopes: readonly string[], output: ScopeLevels | undefined, stackTrace: ScopeLevels | undefined, where: string): ScopeChanges {
  const changes: ScopeChanges = new Map();
  const apply = (flag: string, levels: ScopeLevels | undefined, field: 'output_level' | 'stack_trace_level') => {
    if (!levels) return;
    for (const scope of levels.keys()) {
      if (scope !== EVERY_SCOPE && !scopes.includes(scope)) {
        throw new UserError(`${flag}: unknown scope ${JSON.stringify(scope)} on ${where}; its scopes are ${scopes.join(', ')}`);
      }
    }
    for (const scope of scopes) {
      const level = levels.get(scope) ?? levels.get(EVERY_SCOPE);
      if (level) changes.set(scope, { ...changes.get(scope), [field]: level });
    }
  };
  apply('--level', output, 'output_level');
  apply('--stack-trace-level', stackTrace, 'stack_trace_level');
  return changes;
}

/** `--reset`: every scope back to info, stack traces off, as the incumbent resets them. */
export function resetChanges(scopes: readonly string[]): ScopeChanges {
  return new Map(scopes.map((s) => [s, { output_level: 'info', stack_trace_level: 'none' }]));
}

import { Command } from '@oclif/core';

/**
 * Go-style boolean flags: `--flag=true|false`, `-f=false` (and `=1|0`), which oclif's parser does not
 * take. `--flag=false` becomes `--no-flag` where the flag defaults to true, and is dropped
 * where false is already the default.
 */
export function normalizeBooleanFlags(argv: string[], flags: Command.Class['flags']): string[] {
  const out: string[] = [];
  let rest = false;
  for (const arg of argv) {
    if (rest || arg === '--') {
      rest = true;
      out.push(arg);
      continue;
    }
    const m = /^(?:--([^=]+)|-([A-Za-z]))=(.*)$/.exec(arg);
    const name = m && (m[1] ?? Object.keys(flags ?? {}).find((k) => flags?.[k].char === m[2]));
    const def = name ? flags?.[name] : undefined;
    if (!m || !name || !def || def.type !== 'boolean') {
      out.push(arg);
      continue;
    }
    const value = m[3].toLowerCase();
    if (value === 'true' || value === '1') out.push(`--${name}`);
    else if (value === 'false' || value === '0') {
      if (def.allowNo) out.push(`--no-${name}`);
    } else out.push(arg); // left for the parser to reject with its own message
  }
  return out;
}

/** `--x` and `-x` spellings of the flags that take a value (used to skip their values). */
export function valueFlagSpellings(flags: Command.Class['flags']): Set<string> {
  const out = new Set<string>();
  for (const [name, def] of Object.entries(flags ?? {})) {
    if (def.type !== 'option') continue;
    out.add(`--${name}`);
    if (def.char) out.add(`-${def.char}`);
  }
  return out;
}

export function wantsHelp(argv: string[]): boolean {
  for (const a of argv) {
    if (a === '--') return false;
    if (a === '--help' || a === '-h') return true;
  }
  return false;
}

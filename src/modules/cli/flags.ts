import { Flags } from '@oclif/core';
import { Duration } from '../settings/duration';

/**
 * Flag builders with Go-style semantics (the spec's flags come from a pflag CLI):
 * durations in Go syntax, lists that take both `a,b` and repeated flags, `key=value` maps,
 * and booleans that also accept `--flag=false` (see argv.ts).
 */
type Char = Parameters<typeof Flags.string>[0] extends infer O ? (O extends { char?: infer C } ? C : never) : never;

interface Common {
  char?: Char;
  hidden?: boolean;
  helpGroup?: string;
}

/** The flags the command line gave, as opposed to those oclif filled in from their defaults (their settings decide then). */
export function givenFlags(flags: Record<string, unknown>, metadata: { flags: Record<string, { setFromDefault?: boolean } | undefined> }): Set<string> {
  return new Set(Object.keys(flags).filter((name) => !metadata.flags[name]?.setFromDefault));
}

export function stringFlag(description: string, opts: Common & { default?: string; options?: string[] } = {}) {
  return Flags.string({ description, ...opts });
}

export function intFlag(description: string, opts: Common & { default?: number; min?: number; max?: number } = {}) {
  return Flags.integer({ description, ...opts });
}

export function uint16Flag(description: string, opts: Common & { default?: number } = {}) {
  return Flags.integer({ description, min: 0, max: 65535, ...opts });
}

export function floatFlag(description: string, opts: Common & { default?: number } = {}) {
  return Flags.custom<number>({
    description,
    ...opts,
    parse: async (input: string) => {
      const n = Number(input);
      if (input.trim() === '' || !Number.isFinite(n)) throw new Error(`expected a number, got ${JSON.stringify(input)}`);
      return n;
    },
  })();
}

export function boolFlag(description: string, opts: Common & { default?: boolean } = {}) {
  // A default-true boolean needs a way to be turned off: `--flag=false` (rewritten to --no-flag).
  return Flags.boolean({ description, allowNo: opts.default === true, ...opts, default: opts.default ?? false });
}

export function durationFlag(description: string, opts: Common & { default?: string } = {}) {
  const { default: def, ...rest } = opts;
  return Flags.custom<Duration>({
    description,
    ...rest,
    ...(def !== undefined ? { default: Duration.parse(def), defaultHelp: async () => def } : {}),
    parse: async (input: string) => {
      try {
        return Duration.parse(input);
      } catch {
        throw new Error(`expected a duration such as 30s, 5m0s or 1h0m0s, got ${JSON.stringify(input)}`);
      }
    },
  })();
}

/** `--flag a,b --flag c` → ['a','b','c'] (pflag's StringSlice). */
export function listFlag(description: string, opts: Common & { default?: string[] } = {}) {
  return Flags.string({ description, multiple: true, delimiter: ',', ...opts });
}

/**
 * Like listFlag, but one value per occurrence (`--flag a,b --flag c`), so positional arguments
 * after it stay arguments (`analyze --analyzer X file.yaml`), as pflag's StringSlice reads them.
 */
export function sliceFlag(description: string, opts: Common & { default?: string[] } = {}) {
  return Flags.string({ description, multiple: true, multipleNonGreedy: true, delimiter: ',', ...opts });
}

/** `--flag a --flag b` → ['a','b'], commas kept (pflag's StringArray). */
export function arrayFlag(description: string, opts: Common & { default?: string[] } = {}) {
  return Flags.string({ description, multiple: true, ...opts });
}

/** `key1=v1,key2=v2` (pflag's StringToString). */
export function mapFlag(description: string, opts: Common & { default?: Record<string, string> } = {}) {
  const { default: def, ...rest } = opts;
  return Flags.custom<Record<string, string>>({
    description,
    ...rest,
    ...(def !== undefined ? { default: async () => ({ ...def }) } : {}),
    parse: async (input: string) => {
      const out: Record<string, string> = {};
      for (const pair of input.split(',').filter((p) => p !== '')) {
        const eq = pair.indexOf('=');
        if (eq <= 0) throw new Error(`expected key=value pairs separated by commas, got ${JSON.stringify(pair)}`);
        out[pair.slice(0, eq)] = pair.slice(eq + 1);
      }
      return out;
    },
  })();
}


import { CompletionFlag, CompletionModel } from './model';

/** Helpers shared by the four script generators. */

export interface CompletionWord {
  name: string;
  summary: string;
}

/**
 * One place in the command tree that typed words lead to. Scripts refer to a level by its
 * index; the root (no words typed) is always level 0.
 */
export interface CompletionLevel {
  /** Every way to type the words leading here, joined by spaces ('' for the root). */
  spellings: string[];
  flags: CompletionFlag[];
  /** Words that may come next: subcommand names and aliases. */
  subcommands: CompletionWord[];
}

/**
 * The model's commands as levels, root first. A full alias path such as `authz check` can
 * pass through words (`authz`) that name no command; the program reads on past them, so
 * each such prefix gets a level of its own, with the flags of the command it extends.
 */
export function completionLevels(model: CompletionModel): CompletionLevel[] {
  const commandAt = new Map<string, number>();
  model.commands.forEach((c, i) => c.spellings.forEach((s) => commandAt.set(s.join(' '), i)));

  const commands = model.commands.map(
    (c): CompletionLevel => ({ spellings: c.spellings.map((s) => s.join(' ')), flags: c.flags, subcommands: [...c.subcommands] }),
  );
  const prefixes = new Map<string, CompletionLevel>();
  for (const c of model.commands) {
    for (const spelling of c.spellings) {
      for (let k = 0; k < spelling.length; k++) {
        const before = spelling.slice(0, k).join(' ');
        const next = spelling[k];
        const nextCommand = commandAt.get(spelling.slice(0, k + 1).join(' '));
        const known = commandAt.get(before);
        const level = known !== undefined ? commands[known] : prefixLevel(prefixes, before, flagsAbove(model, commandAt, spelling.slice(0, k)));
        if (!level.subcommands.some((w) => w.name === next)) {
          level.subcommands.push({ name: next, summary: nextCommand === undefined ? '' : model.commands[nextCommand].summary });
        }
      }
    }
  }
  const rootIndex = commandAt.get('');
  const root = rootIndex !== undefined ? commands[rootIndex] : prefixes.get('');
  const rest = [
    ...commands.filter((_, i) => i !== rootIndex),
    ...[...prefixes].filter(([spelled]) => spelled !== '').sort(([a], [b]) => (a < b ? -1 : 1)).map(([, level]) => level),
  ];
  const levels = root ? [root, ...rest] : [{ spellings: [''], flags: [], subcommands: [] }, ...rest];
  for (const level of levels) level.subcommands.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return levels;
}

function prefixLevel(prefixes: Map<string, CompletionLevel>, spelled: string, flags: CompletionFlag[]): CompletionLevel {
  let level = prefixes.get(spelled);
  if (!level) {
    level = { spellings: [spelled], flags, subcommands: [] };
    prefixes.set(spelled, level);
  }
  return level;
}

/** The flags of the longest run of these words that names a command (none if nothing does). */
function flagsAbove(model: CompletionModel, commandAt: Map<string, number>, words: string[]): CompletionFlag[] {
  for (let n = words.length; n >= 0; n--) {
    const index = commandAt.get(words.slice(0, n).join(' '));
    if (index !== undefined) return model.commands[index].flags;
  }
  return [];
}

/** Every spelled path with the index of the level it leads to, in level order. */
export function spelledPaths(levels: CompletionLevel[]): { spelled: string; level: number }[] {
  return levels.flatMap((level, index) => level.spellings.map((spelled) => ({ spelled, level: index })));
}

/** How a flag is typed: `--name`, then `-c` when it has a short form. */
export function flagSpellings(flag: CompletionFlag): string[] {
  return flag.char ? [`--${flag.name}`, `-${flag.char}`] : [`--${flag.name}`];
}

/** Each way to type a flag that takes a value, per level: what the walk must skip over. */
export function valueFlags(levels: CompletionLevel[]): { level: number; spelling: string; options?: string[] }[] {
  return levels.flatMap((level, index) =>
    level.flags
      .filter((f) => f.takesValue)
      .flatMap((f) => flagSpellings(f).map((spelling) => ({ level: index, spelling, ...(f.options ? { options: f.options } : {}) }))),
  );
}

/** `pilot-discovery` → `pilot_discovery`: shell function names allow letters, digits and `_`. */
export function identifier(program: string): string {
  return program.replace(/[^A-Za-z0-9]/g, '_');
}

/** Summaries are shown on one line; control characters would break the scripts' layout. */
export function oneLine(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
}

/** A bash/zsh single-quoted word: nothing inside is special; a quote is closed, escaped, reopened. */
export function posixQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** A fish single-quoted word: only `\` and `'` need a backslash. */
export function fishQuote(text: string): string {
  return `'${text.replace(/[\\']/g, '\\$&')}'`;
}

/** A PowerShell single-quoted string: quotes are doubled, typographic single quotes included. */
export function powershellQuote(text: string): string {
  return `'${text.replace(/['\u2018\u2019\u201a\u201b]/g, '$&$&')}'`;
}

/**
 * The bash/zsh function that sets REPLY to the level the typed words lead to (its argument
 * is those words joined by spaces), or to '' when they lead nowhere. Quoted case patterns
 * match literally.
 */
export function posixLevelLookup(fn: string, levels: CompletionLevel[]): string {
  const rows = levels.map((level, index) => `    ${level.spellings.map(posixQuote).join('|')}) REPLY=${index} ;;`);
  return [
    `# REPLY := the level that the words in $1 (joined by spaces) lead to, or '' when none.`,
    `${fn}() {`,
    '  case $1 in',
    ...rows,
    "    *) REPLY='' ;;",
    '  esac',
    '}',
  ].join('\n');
}

/**
 * The bash/zsh function telling how flag $2 of level $1 takes a value: REPLY := none, any,
 * or options (and `flag_values` := the allowed values).
 */
export function posixFlagValueLookup(fn: string, levels: CompletionLevel[]): string {
  const rows = valueFlags(levels).map(({ level, spelling, options }) =>
    options ? `    ${posixQuote(`${level} ${spelling}`)}) REPLY=options; flag_values=(${options.map(posixQuote).join(' ')}) ;;` : `    ${posixQuote(`${level} ${spelling}`)}) REPLY=any ;;`,
  );
  return [
    '# REPLY := how flag $2 of level $1 takes a value: none, any, or options (listed in `flag_values`).',
    `${fn}() {`,
    '  case "$1 $2" in',
    ...rows,
    '    *) REPLY=none ;;',
    '  esac',
    '}',
  ].join('\n');
}

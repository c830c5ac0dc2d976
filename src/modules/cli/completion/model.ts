import { CommandTree } from '../command-tree';

/** What shell completion needs to know about one command, from the command tree. */
export interface CompletionFlag {
  /** Long name without dashes. */
  name: string;
  /** Short form without the dash. */
  char?: string;
  /** True when the flag is followed by a value (`--output json`). */
  takesValue: boolean;
  /** Allowed values, when the flag has a fixed set. */
  options?: string[];
  summary: string;
}

export interface CompletionCommand {
  /** The canonical words after the program name ([] for the root command). */
  path: string[];
  /** Every way to type this command's words (aliases included), e.g. [['proxy-config','c'], ['pc','c']]. */
  spellings: string[][];
  summary: string;
  flags: CompletionFlag[];
  /** Words that may follow this command's words: subcommand names and their aliases. */
  subcommands: { name: string; summary: string }[];
}

export interface CompletionModel {
  program: string;
  commands: CompletionCommand[];
}

/** Builds the completion model of a program: every command, alias and flag. Hidden commands are left out. */
export function completionModel(tree: CommandTree): CompletionModel {
  const visible = tree.nodes.filter((n) => !n.meta.hidden);
  const commands = visible.map((node): CompletionCommand => {
    const path = node.path === '' ? [] : node.path.split(' ');
    // Any command whose spelling extends one of this command's spellings is offered here
    // (so `meshctl authz` offers `check`, an alias path of `experimental authz check`).
    const subcommands = new Map<string, string>();
    for (const other of visible) {
      for (const s of other.spellings) {
        const words = s.split(' ');
        if (s !== '' && node.spellings.includes(words.slice(0, -1).join(' '))) {
          subcommands.set(words[words.length - 1], other.meta.summary);
        }
      }
    }
    const flags = Object.entries(node.cls.flags ?? {})
      .filter(([, def]) => !def.hidden)
      .map(([name, def]): CompletionFlag => {
        const flag: CompletionFlag = { name, takesValue: def.type === 'option', summary: firstSentence(def.summary ?? def.description ?? '') };
        if (def.char) flag.char = def.char;
        if (def.type === 'option' && def.options) flag.options = [...def.options];
        return flag;
      })
      .sort((a, b) => a.name.localeCompare(b.name));
    return {
      path,
      spellings: node.spellings.map((s) => (s === '' ? [] : s.split(' '))),
      summary: node.meta.summary,
      flags,
      subcommands: [...subcommands].map(([name, summary]) => ({ name, summary })).sort((a, b) => a.name.localeCompare(b.name)),
    };
  });
  return { program: tree.program, commands };
}

function firstSentence(text: string): string {
  return text.split('\n')[0].replace(/\s+/g, ' ').trim();
}

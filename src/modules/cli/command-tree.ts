import { Command } from '@oclif/core';
import { commandMetadata, CommandMetadata } from './command-decorator';
import { Program } from '../settings/types';

export interface CommandNode {
  readonly id: string;
  readonly path: string;
  readonly meta: CommandMetadata;
  readonly cls: Command.Class;
  /** Every way to type it: the path, its aliases, and its parents' aliases. */
  readonly spellings: string[];
  readonly children: CommandNode[];
}

/** oclif's id for the root command, which has no words. */
export const ROOT_ID = '';

export function commandId(path: string): string {
  return path === '' ? ROOT_ID : path.split(' ').join(':');
}

/**
 * The command tree of one program, built from its @command classes. Resolves what the user
 * typed to a command, following cobra's rules: aliases of a group apply to its subcommands.
 */
export class CommandTree {
  readonly nodes: CommandNode[];
  private readonly byPath = new Map<string, CommandNode>();
  private readonly bySpelling = new Map<string, CommandNode>();

  constructor(
    readonly program: Program,
    classes: Iterable<unknown>,
  ) {
    const found: { meta: CommandMetadata; cls: Command.Class }[] = [];
    for (const cls of classes) {
      const meta = commandMetadata(cls);
      if (!meta || meta.program !== program) continue;
      if (found.some((f) => f.meta.path === meta.path)) throw new Error(`${program}: two commands declare "${meta.path}"`);
      found.push({ meta, cls: cls as Command.Class });
    }
    found.sort((a, b) => depth(a.meta.path) - depth(b.meta.path));
    const pending = new Map(found.map((f) => [f.meta.path, f]));
    for (const { meta } of found) {
      const parentPath = parentOf(meta.path);
      if (meta.path !== '' && parentPath !== '' && !pending.has(parentPath)) {
        throw new Error(`${program}: command "${meta.path}" has no parent command "${parentPath}"`);
      }
    }
    // Spellings follow parents' spellings, whatever order the classes came in.
    const spellings = new Map<string, string[]>();
    const spell = (path: string, trail: string[] = []): string[] => {
      if (path === '') return [''];
      const known = spellings.get(path);
      if (known) return known;
      if (trail.includes(path)) throw new Error(`${program}: aliases of "${path}" refer back to it`);
      const entry = pending.get(path);
      if (!entry) return [path];
      const out = new Set<string>([path]);
      for (const p of [path, ...entry.meta.aliases]) {
        const last = p.split(' ').pop()!;
        for (const ps of spell(parentOf(p), [...trail, path])) out.add(ps ? `${ps} ${last}` : last);
      }
      spellings.set(path, [...out]);
      return [...out];
    };
    for (const { meta, cls } of found) {
      const node: CommandNode = { id: commandId(meta.path), path: meta.path, meta, cls, spellings: spell(meta.path), children: [] };
      this.byPath.set(meta.path, node);
      if (meta.path !== '') this.byPath.get(parentOf(meta.path))?.children.push(node);
      for (const s of node.spellings) {
        const clash = this.bySpelling.get(s);
        if (clash) throw new Error(`${program}: "${s}" names both "${clash.path}" and "${meta.path}"`);
        this.bySpelling.set(s, node);
      }
      // oclif lists the root command like any other; it is the program itself.
      if (meta.path === '') (cls as unknown as { hidden: boolean }).hidden = true;
      (cls as unknown as { aliases: string[] }).aliases = node.spellings.filter((s) => s !== meta.path).map(commandId);
    }
    this.nodes = [...this.byPath.values()];
  }

  get root(): CommandNode | undefined {
    return this.byPath.get('');
  }

  find(path: string): CommandNode | undefined {
    return this.byPath.get(path);
  }

  /** The oclif command map (explicit strategy): id → class. */
  commandMap(): Record<string, Command.Class> {
    return Object.fromEntries(this.nodes.map((n) => [n.id, n.cls]));
  }

  /**
   * Finds the command named by the leading words of argv. Flags may come before the
   * command words (`meshctl -n foo proxy-config c`); `valueFlags` says which flags take a
   * value so their values are not read as command words.
   */
  resolve(argv: string[], valueFlags: ReadonlySet<string>): { node: CommandNode | undefined; argv: string[] } {
    const words: string[] = [];
    const wordIdx: number[] = [];
    for (let i = 0; i < argv.length; i++) {
      const a = argv[i];
      if (a === '--') break;
      if (a.startsWith('-') && a !== '-') {
        if (!a.includes('=') && valueFlags.has(a)) i++;
        continue;
      }
      const candidate = [...words, a].join(' ');
      if (!this.bySpelling.has(candidate) && !this.hasPrefix(candidate)) break;
      words.push(a);
      wordIdx.push(i);
    }
    // Longest run of words that names a command.
    while (words.length > 0 && !this.bySpelling.has(words.join(' '))) {
      words.pop();
      wordIdx.pop();
    }
    const node = words.length ? this.bySpelling.get(words.join(' ')) : this.root;
    const drop = new Set(wordIdx);
    return { node, argv: argv.filter((_, i) => !drop.has(i)) };
  }

  private hasPrefix(candidate: string): boolean {
    for (const s of this.bySpelling.keys()) if (s.startsWith(candidate + ' ')) return true;
    return false;
  }

}

function depth(path: string): number {
  return path === '' ? 0 : path.split(' ').length;
}

function parentOf(path: string): string {
  const words = path.split(' ');
  return words.slice(0, -1).join(' ');
}

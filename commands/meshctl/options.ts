import { command, MeshCommand, meshctlGlobalFlags } from '../../src/modules/cli';

interface FlagDef {
  char?: string;
  description?: string;
  default?: unknown;
  type: string;
}

@command({ program: 'meshctl', path: 'options', summary: 'Displays the options that can be passed to any command' })
export class Options extends MeshCommand {
  async run(): Promise<void> {
    await this.parse(Options);
    const rows = Object.entries(meshctlGlobalFlags as Record<string, FlagDef>).map(([name, def]) => {
      const short = def.char ? `-${def.char}, ` : '    ';
      const value = def.type === 'boolean' ? '' : `=${formatDefault(def.default)}`;
      return { left: `  ${short}--${name}${value}`, right: def.description ?? '' };
    });
    const width = Math.max(...rows.map((r) => r.left.length));
    this.write('The following options can be passed to any command:\n');
    this.write(rows.map((r) => `${r.left.padEnd(width)}  ${r.right}`).join('\n'));
  }
}

function formatDefault(value: unknown): string {
  if (Array.isArray(value)) return `[${value.join(',')}]`;
  if (value === undefined) return "''";
  return typeof value === 'string' ? `'${value}'` : String(value);
}

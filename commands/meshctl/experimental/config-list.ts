import { inject } from 'inversify';
import { stringify } from 'yaml';
import { command, MeshCommand, stringFlag, table } from '../../../src/modules/cli';
import { Settings, SettingsToken } from '../../../src/modules/settings';

@command({
  program: 'meshctl',
  path: 'experimental config list',
  summary: 'Lists the settings of the mesh programs: name, type, default and meaning',
  flags: { output: stringFlag('output format', { char: 'o', options: ['table', 'json', 'yaml'], default: 'table' }) },
})
export class ConfigList extends MeshCommand {
  @inject(SettingsToken) private readonly settings!: Settings;

  async run(): Promise<void> {
    const { flags } = await this.parse(ConfigList);
    const rows = this.settings.all().map(({ definition: d }) => ({
      name: d.name,
      type: d.type,
      default: d.default ?? null,
      meaning: d.meaning,
      programs: [...d.programs, ...(d.alsoReadBy ?? [])],
      // Not in the spec's tables: the mesh's own, or a variable a program reads from its platform.
      ours: d.ours ?? false,
    }));
    for (const f of this.settings.allFamilies()) {
      rows.push({ name: `${f.prefix}*`, type: 'S', default: null, meaning: f.meaning, programs: [...f.programs], ours: true });
    }
    if (flags.output === 'json') return this.write(JSON.stringify(rows, null, 2));
    if (flags.output === 'yaml') return this.write(stringify(rows).trimEnd());
    this.write(table(['NAME', 'TYPE', 'DEFAULT', 'MEANING'], rows.map((r) => [r.name, r.type, r.default ?? '-', r.meaning])));
  }
}

import { inject } from 'inversify';
import { stringify } from 'yaml';
import { command, MeshCommand, stringFlag, table } from '../../../src/modules/cli';
import { createContainer } from '../../../src/container';
import { Environment, PROGRAMS, Program } from '../../../src/modules/settings';

@command({
  program: 'meshctl',
  path: 'experimental plugins',
  summary: 'Lists the plugins a program would load from this environment, whether each is on, and why',
  flags: {
    program: stringFlag('program whose settings decide', { options: [...PROGRAMS], default: 'pilot-discovery' }),
    output: stringFlag('output format', { char: 'o', options: ['table', 'json', 'yaml'], default: 'table' }),
  },
})
export class Plugins extends MeshCommand {
  @inject(Environment) private readonly env!: Environment;

  async run(): Promise<void> {
    const { flags } = await this.parse(Plugins);
    const { plugins } = createContainer({ program: flags.program as Program, env: this.env, cwd: process.cwd() });
    const rows = plugins.map((p) => ({ name: p.name, source: p.source, enabled: p.enabled, reason: p.reason, description: p.description }));
    if (flags.output === 'json') return this.write(JSON.stringify(rows, null, 2));
    if (flags.output === 'yaml') return this.write(stringify(rows).trimEnd());
    if (rows.length === 0) return this.write('No plugins (built-in plugins are added under src/plugins; third-party ones through MESH_PLUGINS).');
    this.write(table(['NAME', 'SOURCE', 'ENABLED', 'REASON'], rows.map((r) => [r.name, r.source, r.enabled ? 'on' : 'off', r.reason])));
  }
}

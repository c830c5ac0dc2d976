import * as fs from 'node:fs';
import { command, listFlag, MeshCommand } from '../../src/modules/cli';
import { configFilesUnder, formatIssue, KindRegistry, KindRegistryToken, parseConfigText } from '../../src/modules/config';

@command({
  program: 'meshctl',
  path: 'validate',
  aliases: ['v'],
  summary: 'Validate mesh policy and rule files',
  usage: 'validate -f FILENAME [options]',
  flags: { filename: listFlag('file or directory to validate; - reads stdin; repeatable', { char: 'f' }) },
})
export class Validate extends MeshCommand {
  async run(): Promise<void> {
    const { flags } = await this.parse(Validate);
    const targets = ((flags.filename ?? []) as string[]).filter((f) => f !== '');
    if (targets.length === 0) this.fail('no input: give files, directories or - (stdin) with -f');
    const kinds = this.container.get<KindRegistry>(KindRegistryToken);
    let problems = 0;
    for (const target of targets) {
      for (const { name, text } of this.read(target)) {
        const result = parseConfigText(name, text, kinds);
        if (result.issues.length === 0) {
          const n = result.resources.length;
          this.write(`"${name}" is valid (${n} resource${n === 1 ? '' : 's'})`);
          continue;
        }
        problems += result.issues.length;
        for (const issue of result.issues) process.stderr.write(`${formatIssue(issue)}\n`);
      }
    }
    if (problems > 0) this.fail(`${problems} problem${problems === 1 ? '' : 's'} found`);
  }

  private read(target: string): { name: string; text: string }[] {
    if (target === '-') return [{ name: '<stdin>', text: fs.readFileSync(0, 'utf8') }];
    let files: string[];
    try {
      files = configFilesUnder(target);
    } catch (err) {
      this.fail(`cannot read ${target}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file or directory' : (err as Error).message}`);
    }
    if (files.length === 0) this.fail(`${target}: no *.yaml, *.yml or *.json files found`);
    return files.map((name) => ({ name, text: fs.readFileSync(name, 'utf8') }));
  }
}

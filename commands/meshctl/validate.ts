import { inject } from 'inversify';
import { command, listFlag, MeshCommand } from '../../src/modules/cli';
import {
  ConfigFileLimits,
  configFileLimits,
  ConfigIssue,
  ConfigLimitSettingError,
  formatIssue,
  KindRegistry,
  KindRegistryToken,
  parseConfigBytes,
  readConfigTargets,
} from '../../src/modules/config';
import { Settings, SettingsToken } from '../../src/modules/settings';

@command({
  program: 'meshctl',
  path: 'validate',
  aliases: ['v'],
  summary: 'Validate mesh policy and rule files',
  usage: 'validate -f FILENAME [options]',
  flags: { filename: listFlag('file or directory to validate; - reads stdin; repeatable', { char: 'f' }) },
})
export class Validate extends MeshCommand {
  @inject(KindRegistryToken) private readonly kinds!: KindRegistry;
  @inject(SettingsToken) private readonly settings!: Settings;

  async run(): Promise<void> {
    const { flags } = await this.parse(Validate);
    const targets = ((flags.filename ?? []) as string[]).filter((f) => f !== '');
    if (targets.length === 0) this.fail('no input: give files, directories or - (stdin) with -f');
    const limits = this.limits();
    let problems = 0;
    // The daemon's rules: same reader (regular files only, size limit), same parser and limits.
    const check = (name: string, bytes: Uint8Array) => {
      const result = parseConfigBytes(name, bytes, this.kinds, limits);
      if (result.issues.length === 0) {
        const n = result.resources.length;
        this.write(n === 0 ? `"${name}" is empty: it declares no resources` : `"${name}" is valid (${n} resource${n === 1 ? '' : 's'})`);
      }
      problems += this.report(result.issues);
      for (const w of result.warnings) process.stderr.write(`Warning: ${formatIssue(w)}\n`);
    };
    for await (const item of readConfigTargets(targets, limits.maxBytes, process.stdin)) {
      if (item.kind === 'bytes') check(item.file, item.bytes);
      else if (item.kind === 'unread') problems += this.report([{ location: { file: item.file }, message: item.skipped ? `skipped: ${item.message}` : item.message }]);
      else if (item.kind === 'unreadable-dir') problems += this.report([{ location: { file: item.dir }, message: `cannot list: ${item.message}` }]);
      else if (item.kind === 'target-error') this.fail(`cannot read ${item.target}: ${item.message}`);
      else this.fail(`${item.target}: no *.yaml, *.yml or *.json files found`);
    }
    if (problems > 0) this.fail(`${problems} problem${problems === 1 ? '' : 's'} found`);
  }

  private limits(): ConfigFileLimits {
    try {
      return configFileLimits(this.settings);
    } catch (err) {
      if (err instanceof ConfigLimitSettingError) this.fail(err.message);
      throw err;
    }
  }

  /** Each issue on stderr, the file first; how many there were. */
  private report(issues: readonly ConfigIssue[]): number {
    for (const issue of issues) process.stderr.write(`${formatIssue(issue)}\n`);
    return issues.length;
  }
}

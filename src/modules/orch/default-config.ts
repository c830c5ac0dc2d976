import * as fs from 'node:fs';
import * as os from 'node:os';
import * as nodePath from 'node:path';
import { inject, injectable } from 'inversify';
import { Settings, SettingsToken } from '../settings';

/**
 * Where a command-line client finds its orchestrator config when `--orchconfig` is empty, as
 * the orchestrator's own CLI does: the first existing file of ORCHCONFIG (`a:b`), else
 * `~/.kube/config` when it exists; undefined means the in-cluster service account. Programs
 * running in the cluster (the daemon) never ask.
 */
@injectable()
export class DefaultOrchConfigFile {
  constructor(@inject(SettingsToken) private readonly settings: Settings) {}

  path(): string | undefined {
    const listed = (this.settings.string('ORCHCONFIG') ?? '').split(':').filter((p) => p !== '');
    if (listed.length) return listed.find((p) => fs.existsSync(p)) ?? listed[0];
    const home = nodePath.join(os.homedir(), '.kube', 'config');
    return fs.existsSync(home) ? home : undefined;
  }
}

import { Command } from '@oclif/core';
import { inject } from 'inversify';
import { stringify } from 'yaml';
import { BuildInfo, BuildInfoToken } from '../build-info';
import { boolFlag, stringFlag } from './flags';
import { MeshCommand } from './mesh-command';
import { command } from './command-decorator';
import { Program } from '../settings/types';

export const versionFlags = {
  output: stringFlag('one of "yaml" or "json"', { char: 'o', options: ['yaml', 'json'] }),
  short: boolFlag('use --short=false to generate full version information', { char: 's', default: true }),
};

/** `version` of every program: the short version, the full build info, or YAML/JSON of it. */
export abstract class VersionCommandBase extends MeshCommand {
  static override flags = versionFlags;

  @inject(BuildInfoToken) private readonly buildInfo!: BuildInfo;

  /** Label before the version (meshctl says `client version:`). */
  protected label = '';

  async run(): Promise<void> {
    const { flags } = await this.parse(this.constructor as Command.Class);
    this.write(formatVersion(this.buildInfo, flags.output as string | undefined, flags.short as boolean, this.label));
    await this.afterVersion(flags);
  }

  /** Hook for meshctl's control-plane part. */
  protected async afterVersion(_flags: Record<string, unknown>): Promise<void> {}
}

export function formatVersion(info: BuildInfo, output: string | undefined, short: boolean, label = ''): string {
  if (output === 'json') return JSON.stringify({ clientVersion: info }, null, 2);
  if (output === 'yaml') return stringify({ clientVersion: info }).trimEnd();
  const text = short
    ? info.version
    : `version.BuildInfo{Version:"${info.version}", GitRevision:"${info.revision}", NodeVersion:"${info.nodeVersion}", BuildStatus:"${info.status}", GitTag:"${info.tag}"}`;
  return label ? `${label} ${text}` : text;
}

/** The plain `version` command of a program. */
export function versionCommand(program: Program): Command.Class {
  return command({ program, path: 'version', summary: 'Prints out build version information' })(class Version extends VersionCommandBase {});
}

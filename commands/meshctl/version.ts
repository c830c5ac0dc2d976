import { boolFlag, command, stringFlag, VersionCommandBase, versionFlags } from '../../src/modules/cli';

@command({
  program: 'meshctl',
  path: 'version',
  summary: 'Prints out build version information',
  flags: {
    ...versionFlags,
    remote: boolFlag('use --remote=false to suppress control plane check', { default: true }),
    revision: stringFlag('control plane revision', { char: 'r', default: '' }),
  },
})
export class Version extends VersionCommandBase {
  protected override label = 'client version:';

  protected override async afterVersion(flags: Record<string, unknown>): Promise<void> {
    if (flags.remote && !flags.output) {
      // Asking the control plane needs the orchestrator client, which comes with a later issue.
      process.stderr.write('control plane version: not checked: querying the control plane is not implemented yet (use --remote=false)\n');
    }
  }
}

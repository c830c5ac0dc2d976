import { inject } from 'inversify';
import { BuildInfo, BuildInfoToken } from '../../../src/modules/build-info';
import { boolFlag, command, MeshCommand, stringFlag } from '../../../src/modules/cli';
import { atLeast, formatMessages, MessageFormat, Precheck } from '../../../src/modules/diagnose';
import { OrchClientOptionsToken } from '../../../src/modules/orch';
import { MeshctlOrchFlags, meshctlOrchOptions } from '../../../src/modules/orch-access';
import { outputFormatFlag, severityFlag } from '../flag-types';
import { withOrchAccess } from '../orch-access-scope';

@command({
  program: 'meshctl',
  path: 'experimental precheck',
  summary: 'Check that the cluster meets the requirements to install or upgrade the mesh',
  flags: {
    'from-version': stringFlag('version being upgraded from, to check the upgrade from it', { char: 'f' }),
    output: outputFormatFlag(['log', 'json', 'yaml'], 'log'),
    'output-threshold': severityFlag('lowest message severity to display', 'Warning'),
    revision: stringFlag('control plane revision to check', { char: 'r' }),
    'skip-controlplane': boolFlag('skip the checks of the control plane'),
  },
})
export class ExperimentalPrecheck extends MeshCommand {
  @inject(BuildInfoToken) private readonly buildInfo!: BuildInfo;

  async run(): Promise<void> {
    const { flags } = await this.parse(ExperimentalPrecheck);
    const messages = await withOrchAccess(
      this.scope,
      flags as MeshctlOrchFlags,
      async () => {
        // The same client as the access's: the orchestrator client is one per process.
        const precheck = this.scope.resolve(Precheck, [[OrchClientOptionsToken, meshctlOrchOptions(flags as MeshctlOrchFlags)]]);
        return precheck.run({
          meshNamespace: flags.meshNamespace,
          namespace: flags.namespace ?? '',
          revision: flags.revision ?? '',
          fromVersion: flags['from-version'],
          skipControlPlane: flags['skip-controlplane'],
          meshVersion: this.buildInfo.version,
        });
      },
      'checking the cluster',
    );
    const format = (flags.output ?? 'log') as MessageFormat;
    const shown = messages.filter((m) => atLeast(m.type.level, flags['output-threshold']));
    // Levels in colour on a terminal only.
    if (shown.length || format !== 'log') this.write(formatMessages(shown, format, format === 'log' && process.stdout.isTTY === true));
    if (!shown.length) process.stderr.write('✔ No issues found when checking the cluster. Mesh is safe to install or upgrade!\n');
    if (messages.some((m) => m.type.level === 'Error')) this.fail('Issues found when checking the cluster. Mesh may not be safe to install or upgrade.');
  }
}

import * as fs from 'node:fs';
import * as path from 'node:path';
import { stringify } from 'yaml';
import { boolFlag, command, durationFlag, GroupCommand, MeshCommand, stringFlag } from '../../src/modules/cli';
import { detectClusterPlatform, InstallSetFlags, manifestYaml, renderFromFlags, resolveOperator, runInstall, translateValues, defaultManifestsDir } from '../../src/modules/install';
import { Duration } from '../../src/modules/settings/duration';
import { UserError } from '../../src/modules/shared/user-error';
import { installSetFlags, pickFlags } from './flag-groups';
import { withOrchAccess } from './orch-access-scope';

/** Flags of `install`, shared with `manifest install` ("same as install"). */
const installFlags = {
  ...installSetFlags,
  'readiness-timeout': durationFlag('how long to wait for the installed resources to become ready', { default: '5m0s' }),
  'skip-confirmation': boolFlag('do not ask for confirmation', { char: 'y' }),
  verify: boolFlag('verify the installation after applying it'),
};

const warn = (line: string) => process.stderr.write(`${line}\n`);

/** `install`, `manifest install` and their aliases: one flow. */
abstract class InstallCommand extends MeshCommand {
  protected async install(flags: Record<string, unknown>): Promise<void> {
    // Rendered before the cluster is reached, so a bad file or --set is said first.
    const { objects, spec } = renderFromFlags(flags, warn);
    const timeout = flags['readiness-timeout'] as Duration;
    const options = { dryRun: flags['dry-run'] === true, skipConfirmation: flags['skip-confirmation'] === true, readinessTimeoutMs: timeout.milliseconds, verify: flags.verify === true };
    if (options.dryRun) return runInstall(() => undefined as never, objects, spec, options);
    await withOrchAccess(this.scope, flags as never, async (access) => {
      const forCluster = renderFromFlags(flags, () => undefined, await detectClusterPlatform(access.client));
      await runInstall(() => access.client, forCluster.objects, forCluster.spec, options);
    });
  }
}

// `upgrade` is an alias of install (spec table), not a command of its own.
@command({
  program: 'meshctl',
  path: 'install',
  aliases: ['apply', 'upgrade'],
  summary: 'Generate the install manifest and apply it to the cluster',
  description:
    'Renders the operator resource (a profile — default, demo, minimal, remote, empty — overlaid by the -f files ' +
    'left to right, then each --set) into orchestrator objects, applies them with server-side apply (field ' +
    'manager meshctl), CRDs first, and waits until the Deployments are available and the DaemonSets ready.',
  flags: installFlags,
})
export class Install extends InstallCommand {
  async run(): Promise<void> {
    const { flags } = await this.parse(Install);
    await this.install(flags);
  }
}

@command({
  program: 'meshctl',
  path: 'manifest',
  summary: 'Commands that render and apply the install manifest',
  group: true,
})
export class Manifest extends GroupCommand {}

@command({
  program: 'meshctl',
  path: 'manifest generate',
  summary: 'Print the install manifest',
  flags: {
    ...installSetFlags,
    'cluster-specific': boolFlag('read the current cluster to render values specific to it'),
  },
})
export class ManifestGenerate extends MeshCommand {
  async run(): Promise<void> {
    const { flags } = await this.parse(ManifestGenerate);
    let { objects } = renderFromFlags(flags as InstallSetFlags, warn);
    if (flags['cluster-specific']) {
      // The cluster's platform decides node paths (e.g. where the node plugin's files go).
      const platform = await withOrchAccess(this.scope, flags as never, (access) => detectClusterPlatform(access.client));
      objects = renderFromFlags(flags as InstallSetFlags, () => undefined, platform).objects;
    }
    process.stdout.write(manifestYaml(objects));
  }
}

@command({
  program: 'meshctl',
  path: 'manifest install',
  aliases: ['apply'],
  summary: 'Generate the install manifest and apply it to the cluster (as install)',
  flags: installFlags,
})
export class ManifestInstall extends InstallCommand {
  async run(): Promise<void> {
    const { flags } = await this.parse(ManifestInstall);
    await this.install(flags);
  }
}

@command({
  program: 'meshctl',
  path: 'manifest translate',
  summary: 'Translate an operator resource into chart values',
  description: 'Prints the values the renderer uses (YAML); with --output, writes them to that file, or to <dir>/values.yaml when it is a directory.',
  flags: {
    ...pickFlags(installSetFlags, 'filename', 'manifests', 'revision', 'set', 'dry-run'),
    output: stringFlag('where to write the output', { char: 'o' }),
  },
})
export class ManifestTranslate extends MeshCommand {
  async run(): Promise<void> {
    const { flags } = await this.parse(ManifestTranslate);
    const { spec } = resolveOperator({ files: flags.filename, sets: flags.set, revision: flags.revision, manifestsDir: flags.manifests || defaultManifestsDir() });
    const text = stringify(translateValues(spec), { lineWidth: 0 });
    if (!flags.output || flags['dry-run']) {
      process.stdout.write(text);
      return;
    }
    const target = fs.existsSync(flags.output) && fs.statSync(flags.output).isDirectory() ? path.join(flags.output, 'values.yaml') : flags.output;
    try {
      fs.writeFileSync(target, text);
    } catch (err) {
      throw new UserError(`cannot write ${target}: ${(err as Error).message}`);
    }
    this.write(`wrote ${target}`);
  }
}

import { boolFlag, command, MeshCommand, stringFlag } from '../../src/modules/cli';
import { renderFromFlags, runUninstall } from '../../src/modules/install';
import { installSetFlags, pickFlags } from './flag-groups';
import { withOrchAccess } from './orch-access-scope';

@command({
  program: 'meshctl',
  path: 'uninstall',
  summary: 'Remove the mesh from the cluster',
  description:
    'Removes the objects of one revision (--revision; the default revision without it), found by the labels ' +
    'install puts on them (app.kubernetes.io/part-of=mesh, mesh.io/rev=<revision>); with -f or --set, only the ' +
    'objects that operator resource renders. --purge removes every mesh object of every revision, CRDs and ' +
    'namespaces included.',
  flags: {
    // A single file here, unlike the install-set group's repeatable --filename.
    filename: stringFlag('operator custom resource file of the install to remove', { char: 'f' }),
    purge: boolFlag('remove every mesh resource, of every version'),
    'skip-confirmation': boolFlag('do not ask for confirmation', { char: 'y' }),
    verbose: boolFlag('verbose output', { char: 'v' }),
    ...pickFlags(installSetFlags, 'manifests', 'revision', 'set', 'dry-run', 'force'),
  },
})
export class Uninstall extends MeshCommand {
  async run(): Promise<void> {
    const { flags } = await this.parse(Uninstall);
    const fromResource = !flags.purge && (flags.filename !== undefined || (flags.set ?? []).length > 0);
    const rendered = fromResource
      ? renderFromFlags({ filename: flags.filename ? [flags.filename] : [], set: flags.set, revision: flags.revision, manifests: flags.manifests, force: flags.force }, (l) => process.stderr.write(`${l}\n`))
      : undefined;
    await withOrchAccess(this.scope, flags as never, (access) =>
      runUninstall(
        access.client,
        {
          revision: rendered?.spec.revision ?? flags.revision ?? '',
          purge: flags.purge,
          dryRun: flags['dry-run'],
          skipConfirmation: flags['skip-confirmation'],
          verbose: flags.verbose,
          limitTo: rendered?.objects,
        },
        (line) => this.write(line),
      ),
    );
  }
}

/*
 * The flow of `install` and `uninstall`, between the command (flags, output) and the pieces
 * (render, apply, delete): what is shown, when to ask, what a dry run stops before.
 */
import { terminalProgress } from '../cli/progress';
import { OrchClient } from '../orch';
import { UserError } from '../shared/user-error';
import { applyManifest, verifyInstall, waitForReadiness } from './apply';
import { confirm } from '../cli/confirm';
import { defaultManifestsDir, resolveOperator } from './operator';
import { ManifestObject, objectRef, renderManifest } from './render';
import { deleteObjects, findInstalled, uninstallSelector } from './uninstall';
import { withDetectedPlatform } from './platform';

export interface InstallSetFlags {
  filename?: string[];
  manifests?: string;
  revision?: string;
  set?: string[];
  force?: boolean;
  charts?: string;
}

/** The manifest the install-set flags describe, with the validation warnings --force let through. */
export function renderFromFlags(flags: InstallSetFlags, warn: (line: string) => void, clusterPlatform?: string): { objects: ManifestObject[]; spec: ReturnType<typeof resolveOperator>['spec'] } {
  if (flags.charts) warn('--charts is deprecated: use --manifests');
  const manifestsDir = flags.manifests || flags.charts || defaultManifestsDir();
  const resolved = resolveOperator({ files: flags.filename, sets: flags.set, revision: flags.revision, manifestsDir, force: flags.force });
  for (const w of resolved.warnings) warn(`warning (--force): ${w}`);
  const spec = withDetectedPlatform(resolved.spec, clusterPlatform);
  return { objects: renderManifest(spec, manifestsDir), spec };
}

export interface InstallOptions {
  dryRun: boolean;
  skipConfirmation: boolean;
  readinessTimeoutMs: number;
  verify: boolean;
}

/** Shows the plan, asks, applies, waits for readiness, verifies. Progress goes to `err`. */
export async function runInstall(client: () => OrchClient, objects: ManifestObject[], spec: { profile: string; revision: string }, opts: InstallOptions, err: NodeJS.WriteStream = process.stderr): Promise<void> {
  const revision = spec.revision || 'default';
  err.write(`This will install the mesh profile "${spec.profile}" (revision "${revision}") into the cluster: ${objects.length} objects:\n`);
  for (const o of objects) err.write(`  ${objectRef(o)}\n`);
  if (opts.dryRun) {
    err.write('dry run: nothing was changed\n');
    return;
  }
  if (objects.length === 0) {
    err.write('nothing to install\n');
    return;
  }
  if (!opts.skipConfirmation && !(await confirm('Proceed? [y/N]', { output: process.stderr, requireTerminal: true }))) throw new UserError('cancelled: nothing was changed');
  const progress = terminalProgress('connecting', err);
  const reporter = {
    // On a terminal the spinner's line is cleared first; it redraws below on its next tick.
    line: (text: string) => err.write(`${err.isTTY ? '\r\x1b[2K' : ''}${text}\n`),
    status: (text: string) => progress.update(text),
  };
  const orch = client();
  try {
    const outcomes = await applyManifest(orch, objects, reporter, opts.readinessTimeoutMs);
    await waitForReadiness(orch, objects, reporter, opts.readinessTimeoutMs);
    if (opts.verify) {
      await verifyInstall(orch, objects);
      reporter.line(`✔ verified: all ${objects.length} objects exist`);
    }
    const changed = [...outcomes.values()].filter((o) => o !== 'unchanged').length;
    progress.done();
    err.write(`✔ Installation complete (${changed === 0 ? 'no changes' : `${changed} objects created or configured`})\n`);
  } finally {
    progress.done();
  }
}

export interface UninstallOptions {
  revision: string;
  purge: boolean;
  dryRun: boolean;
  skipConfirmation: boolean;
  verbose: boolean;
  /** Objects rendered from `-f`/`--set`: only those of them that exist are removed. */
  limitTo?: ManifestObject[];
}

export async function runUninstall(orch: OrchClient, opts: UninstallOptions, out: (line: string) => void, err: NodeJS.WriteStream = process.stderr): Promise<void> {
  let targets = await findInstalled(orch, { revision: opts.revision, purge: opts.purge });
  if (opts.limitTo) {
    const wanted = new Set(opts.limitTo.map(objectRef));
    targets = targets.filter((t) => wanted.has(objectRef(t)));
  }
  const what = opts.purge ? 'every mesh object (all revisions, CRDs and namespaces)' : `the mesh revision "${opts.revision || 'default'}"`;
  if (targets.length === 0) {
    const selector = uninstallSelector({ revision: opts.revision, purge: opts.purge });
    out(opts.limitTo ? `nothing to remove: none of the ${opts.limitTo.length} objects the operator resource renders exist with ${selector}` : `nothing to remove: no objects match ${selector}`);
    return;
  }
  err.write(`This will remove ${what}: ${targets.length} objects.\n`);
  if (opts.dryRun || opts.verbose) for (const t of targets) err.write(`  ${objectRef(t)}\n`);
  if (opts.dryRun) {
    err.write('dry run: nothing was changed\n');
    return;
  }
  if (!opts.skipConfirmation && !(await confirm('Proceed? [y/N]', { output: process.stderr, requireTerminal: true }))) throw new UserError('cancelled: nothing was changed');
  let count = 0;
  await deleteObjects(orch, targets, (obj) => {
    count++;
    if (opts.verbose) out(`removed ${objectRef(obj)}`);
  });
  out(`✔ Removed ${count} objects`);
}

import { arrayFlag, boolFlag, command, durationFlag, intFlag, listFlag, MeshCommand, stringFlag, terminalProgress } from '../../src/modules/cli';
import { BugReportFlags, bugReportOptions, runBugReport } from '../../src/modules/bug-report';
import { MeshctlOrchFlags } from '../../src/modules/orch-access';
import { withOrchAccess } from './orch-access-scope';

/**
 * Flags of `bug-report`, exported for `bug-report version` ("same flags plus ...").
 * `--context` is meshctl's global flag (same name, type and meaning), so it is not redeclared.
 */
export const bugReportFlags = {
  'critical-errs': listFlag('glob patterns; a log with an error matching one gets the top archive priority'),
  dir: stringFlag('directory for temporary files'),
  'dry-run': boolFlag('only log the commands that would run; fetch and write nothing'),
  duration: durationFlag('how far back from the end time to collect logs; excludes --start-time', { default: '0s' }),
  'end-time': stringFlag('end of the log time range (RFC3339); default now'),
  // StringArray, not a comma list: one filter separates its names with commas (see usage rule 4).
  exclude: arrayFlag(
    'filter of pods whose logs to leave out, as ns,.../deployment,.../pod,.../label=value,.../annotation=value,.../container,...',
    { default: ['kube-node-lease,kube-public,kube-system,local-path-storage'] },
  ),
  filename: stringFlag('YAML config file applied over the defaults and flags (lists are replaced)', { char: 'f' }),
  'full-secrets': boolFlag('include secret contents in the archive'),
  'ignore-errs': listFlag('glob patterns of log errors to ignore when ranking logs'),
  include: arrayFlag('filter of pods whose logs to include, in the form of --exclude'),
  'mesh-namespace': stringFlag('namespace the control plane is installed in', { default: 'mesh-system' }),
  'output-dir': stringFlag('directory for the archive'),
  'rq-concurrency': intFlag('limit of concurrent requests to the orchestrator API; 0 means 32', { default: 0 }),
  'start-time': stringFlag('start of the log time range (RFC3339); excludes --duration'),
  timeout: durationFlag('longest time spent fetching logs; what was captured by then is saved', { default: '30m0s' }),
};

@command({
  program: 'meshctl',
  path: 'bug-report',
  summary: 'Capture cluster information and logs into an archive to help diagnose problems',
  usage: 'bug-report [flags]',
  flags: bugReportFlags,
})
export class BugReport extends MeshCommand {
  async run(): Promise<void> {
    const { flags } = await this.parse(BugReport);
    const f = flags as unknown as BugReportFlags & MeshctlOrchFlags;
    // Checked before reaching the cluster: a bad filter, time or config file fails at once.
    const options = bugReportOptions(f);
    // On a terminal a spinner shows how far it got; a summary line clears it, prints, and the spinner goes on below.
    let shown = 'bug-report: listing the cluster...';
    let progress = terminalProgress(shown);
    try {
      await withOrchAccess(this.scope, f, (access) =>
        runBugReport(access, options, {
          progress: (text) => progress.update((shown = `bug-report: ${text}`)),
          summary: (line) => {
            progress.done();
            process.stderr.write(`${line}\n`);
            progress = terminalProgress(shown);
          },
          result: (line) => {
            progress.done();
            this.write(line);
          },
        }),
      );
    } finally {
      progress.done();
    }
  }
}

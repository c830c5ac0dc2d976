import { command, VersionCommandBase, versionFlags } from '../../src/modules/cli';
import { bugReportFlags } from './bug-report';

@command({
  program: 'meshctl',
  path: 'bug-report version',
  summary: 'Prints out build version information',
  flags: { ...bugReportFlags, ...versionFlags },
})
export class BugReportVersion extends VersionCommandBase {}

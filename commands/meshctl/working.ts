import { completionCommands } from '../../src/modules/cli';
import { BugReportVersion } from './bug-report-version';
import { ConfigList } from './experimental/config-list';
import { Plugins } from './experimental/plugins';
import { Options } from './options';
import { Meshctl } from './root';
import { Version } from './version';

/** meshctl commands that share code with the other programs or are written by hand here. */
export const WORKING_COMMANDS = [Meshctl, Version, BugReportVersion, Options, ConfigList, Plugins, ...completionCommands('meshctl')];

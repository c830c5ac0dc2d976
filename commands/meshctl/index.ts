import { commandsOf } from '../../src/modules/cli';
import { WORKING_COMMANDS } from './working';
import * as admin from './admin';
import * as analyze from './analyze';
import * as bugReport from './bug-report';
import * as createRemoteSecret from './create-remote-secret';
import * as dashboard from './dashboard';
import * as experimental from './experimental';
import * as experimentalAuthz from './experimental/authz';
import * as experimentalCheckInject from './experimental/check-inject';
import * as experimentalConfig from './experimental/config';
import * as experimentalDescribe from './experimental/describe';
import * as experimentalInternalDebug from './experimental/internal-debug';
import * as experimentalMetrics from './experimental/metrics';
import * as experimentalPrecheck from './experimental/precheck';
import * as experimentalVersion from './experimental/version';
import * as experimentalWorkload from './experimental/workload';
import * as install from './install';
import * as orchInject from './orch-inject';
import * as proxyConfig from './proxy-config';
import * as proxyStatus from './proxy-status';
import * as remoteClusters from './remote-clusters';
import * as tag from './tag';
import * as uninstall from './uninstall';
import * as validate from './validate';
import * as waypoint from './waypoint';
import * as ztunnelConfig from './ztunnel-config';

/** Every @command class these modules export (one module per command family). */
export const COMMANDS = [
  ...WORKING_COMMANDS,
  ...commandsOf(
    admin,
    analyze,
    bugReport,
    createRemoteSecret,
    dashboard,
    experimental,
    experimentalAuthz,
    experimentalCheckInject,
    experimentalConfig,
    experimentalDescribe,
    experimentalInternalDebug,
    experimentalMetrics,
    experimentalPrecheck,
    experimentalVersion,
    experimentalWorkload,
    install,
    orchInject,
    proxyConfig,
    proxyStatus,
    remoteClusters,
    tag,
    uninstall,
    validate,
    waypoint,
    ztunnelConfig,
  ),
];

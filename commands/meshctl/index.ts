import { WORKING_COMMANDS } from './working';
import { Admin, AdminLog } from './admin';
import { Analyze } from './analyze';
import { BugReport } from './bug-report';
import { CreateRemoteSecret } from './create-remote-secret';
import {
  Dashboard,
  DashboardControlz,
  DashboardGraphing,
  DashboardMeshdDebug,
  DashboardMetricsStore,
  DashboardProxy,
  DashboardSidecar,
  DashboardTopology,
  DashboardTracingA,
  DashboardTracingB,
  DashboardTracingC,
} from './dashboard';
import { Experimental } from './experimental';
import { ExperimentalAuthz, ExperimentalAuthzCheck } from './experimental/authz';
import { ExperimentalCheckInject } from './experimental/check-inject';
import { ExperimentalConfig } from './experimental/config';
import { ExperimentalDescribe, ExperimentalDescribePod } from './experimental/describe';
import { ExperimentalInternalDebug } from './experimental/internal-debug';
import { ExperimentalMetrics } from './experimental/metrics';
import { ExperimentalPrecheck } from './experimental/precheck';
import { ExperimentalVersion } from './experimental/version';
import {
  ExperimentalWorkload,
  ExperimentalWorkloadEntry,
  ExperimentalWorkloadEntryConfigure,
  ExperimentalWorkloadGroup,
  ExperimentalWorkloadGroupCreate,
} from './experimental/workload';
import { Install, Manifest, ManifestGenerate, ManifestInstall, ManifestTranslate } from './install';
import { OrchInject } from './orch-inject';
import {
  ProxyConfig,
  ProxyConfigAll,
  ProxyConfigBootstrap,
  ProxyConfigCluster,
  ProxyConfigEcds,
  ProxyConfigEndpoint,
  ProxyConfigListener,
  ProxyConfigLog,
} from './proxy-config';
import { ProxyStatus } from './proxy-status';
import { RemoteClusters } from './remote-clusters';
import { Tag, TagGenerate, TagList, TagRemove, TagSet } from './tag';
import { Uninstall } from './uninstall';
import { Validate } from './validate';
import { Waypoint, WaypointApply, WaypointDelete, WaypointGenerate, WaypointList, WaypointStatus } from './waypoint';
import {
  ZtunnelConfig,
  ZtunnelConfigAll,
  ZtunnelConfigCertificate,
  ZtunnelConfigConnections,
  ZtunnelConfigLog,
  ZtunnelConfigPolicy,
  ZtunnelConfigService,
  ZtunnelConfigWorkload,
} from './ztunnel-config';

export const COMMANDS = [
  ...WORKING_COMMANDS,
  Experimental,
  ExperimentalAuthz,
  ExperimentalAuthzCheck,
  ExperimentalCheckInject,
  ExperimentalConfig,
  ExperimentalDescribe,
  ExperimentalDescribePod,
  ExperimentalInternalDebug,
  ExperimentalMetrics,
  ExperimentalPrecheck,
  ExperimentalVersion,
  ExperimentalWorkload,
  ExperimentalWorkloadEntry,
  ExperimentalWorkloadEntryConfigure,
  ExperimentalWorkloadGroup,
  ExperimentalWorkloadGroupCreate,
  Admin,
  AdminLog,
  Analyze,
  BugReport,
  CreateRemoteSecret,
  Dashboard,
  DashboardControlz,
  DashboardSidecar,
  DashboardGraphing,
  DashboardMeshdDebug,
  DashboardTracingA,
  DashboardTopology,
  DashboardMetricsStore,
  DashboardProxy,
  DashboardTracingB,
  DashboardTracingC,
  Install,
  Manifest,
  ManifestGenerate,
  ManifestInstall,
  ManifestTranslate,
  OrchInject,
  ProxyConfig,
  ProxyConfigAll,
  ProxyConfigBootstrap,
  ProxyConfigCluster,
  ProxyConfigEcds,
  ProxyConfigEndpoint,
  ProxyConfigListener,
  ProxyConfigLog,
  ProxyStatus,
  RemoteClusters,
  Tag,
  TagGenerate,
  TagList,
  TagRemove,
  TagSet,
  Uninstall,
  Validate,
  Waypoint,
  WaypointApply,
  WaypointDelete,
  WaypointGenerate,
  WaypointList,
  WaypointStatus,
  ZtunnelConfig,
  ZtunnelConfigAll,
  ZtunnelConfigCertificate,
  ZtunnelConfigConnections,
  ZtunnelConfigLog,
  ZtunnelConfigPolicy,
  ZtunnelConfigService,
  ZtunnelConfigWorkload,
];

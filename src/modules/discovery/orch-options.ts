/**
 * The daemon's orchestrator options from its flags and settings: the client (`--orchconfig`,
 * `--orchApiQPS`, `--orchApiBurst`) and the Orch registry (`--domain`, `--clusterID` or
 * CLUSTER_ID, `--namespace` or POD_NAMESPACE, MESH_WATCH_NAMESPACE,
 * PILOT_SEND_UNHEALTHY_ENDPOINTS, PILOT_PERSISTENT_SESSION_LABEL).
 */
import { inject, injectable } from 'inversify';
import { OrchClientOptions } from '../orch';
import { allowedInsecureOptions, OrchRegistryOptions, RemoteClustersOptions } from '../registry';
import { Settings, SettingsToken } from '../settings';
import { DaemonFlags, DaemonFlagsToken } from './daemon-flags';

/** Cached objects are re-examined this often: cheap (no API calls, no push unless something moved). */
export const ORCH_RESYNC_MS = 10 * 60_000;

@injectable()
export class OrchClientOptionsFromFlags implements OrchClientOptions {
  readonly orchconfig: string;
  readonly qps: number;
  readonly burst: number;

  constructor(@inject(DaemonFlagsToken) flags: DaemonFlags) {
    this.orchconfig = flags.orchconfig;
    this.qps = flags.orchApiQPS;
    this.burst = flags.orchApiBurst;
  }
}

/** `--orchconfig` given, or running in a cluster (ORCH_SERVICE_HOST set). */
export function orchestratorConfigured(flags: DaemonFlags, settings: Settings): boolean {
  return flags.orchconfig !== '' || (settings.string('ORCH_SERVICE_HOST') ?? '') !== '';
}

/** The daemon's namespace: `--namespace` when given, else POD_NAMESPACE (default mesh-system). */
export function systemNamespaceOf(flags: DaemonFlags, settings: Settings): string {
  return flags.namespace || settings.string('POD_NAMESPACE') || 'mesh-system';
}

/** The cluster ID: `--clusterID` when given, else CLUSTER_ID (default Orch). */
export function clusterIdOf(flags: DaemonFlags, settings: Settings): string {
  return flags.clusterID || settings.string('CLUSTER_ID') || 'Orch';
}

@injectable()
export class OrchRegistryOptionsFromFlags implements OrchRegistryOptions {
  readonly domain: string;
  readonly clusterId: string;
  readonly systemNamespace: string;
  readonly watchNamespace: string;
  readonly sendUnhealthyEndpoints: boolean;
  readonly persistentSessionLabel: string;
  readonly resyncMs = ORCH_RESYNC_MS;

  constructor(@inject(DaemonFlagsToken) flags: DaemonFlags, @inject(SettingsToken) settings: Settings) {
    this.domain = flags.domain;
    this.clusterId = clusterIdOf(flags, settings);
    this.systemNamespace = systemNamespaceOf(flags, settings);
    this.watchNamespace = settings.string('MESH_WATCH_NAMESPACE');
    this.sendUnhealthyEndpoints = settings.bool('PILOT_SEND_UNHEALTHY_ENDPOINTS');
    this.persistentSessionLabel = settings.string('PILOT_PERSISTENT_SESSION_LABEL');
  }
}

/** The remote clusters: PILOT_REMOTE_CLUSTER_TIMEOUT, PILOT_INSECURE_MULTICLUSTER_ORCHCONFIG_OPTIONS, the local client's QPS and burst. */
@injectable()
export class RemoteClustersOptionsFromFlags implements RemoteClustersOptions {
  readonly syncTimeoutMs: number;
  readonly allowedInsecureOptions: ReadonlySet<string>;
  readonly qps: number;
  readonly burst: number;
  readonly resyncMs = ORCH_RESYNC_MS;

  constructor(@inject(DaemonFlagsToken) flags: DaemonFlags, @inject(SettingsToken) settings: Settings) {
    this.syncTimeoutMs = settings.duration('PILOT_REMOTE_CLUSTER_TIMEOUT').milliseconds;
    this.allowedInsecureOptions = allowedInsecureOptions(settings.string('PILOT_INSECURE_MULTICLUSTER_ORCHCONFIG_OPTIONS') ?? '');
    this.qps = flags.orchApiQPS;
    this.burst = flags.orchApiBurst;
  }
}

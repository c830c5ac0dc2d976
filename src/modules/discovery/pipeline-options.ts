import { inject, injectable } from 'inversify';
import { ServiceEntrySpec } from '../config/kinds/service-entry';
import { ConfigResource } from '../config/resource';
import { MeshConfig, MeshConfigValues, MeshNetworks, NetworkAssignment } from '../mesh-config';
import { XdsCache } from '../model/xds-cache';
import { DaemonMetrics } from '../monitoring';
import { MulticlusterRegistry, PlatformRegistry, ServiceRegistries } from '../registry';
import { Settings, SettingsToken } from '../settings';
import { DaemonFlags, DaemonFlagsToken } from './daemon-flags';
import { clusterIdOf } from './orch-options';
import { xdsCacheFrom } from './observers';
import { PushCoordinatorOptions } from './push-coordinator';

/**
 * The push pipeline's options: `--domain` and `--clusterID`, the live mesh config (its root
 * namespace) and mesh networks, the debounce settings (PILOT_DEBOUNCE_AFTER/MAX,
 * PILOT_ENABLE_EDS_DEBOUNCE), the other registries' services (Mock, Orch;
 * PILOT_ENABLE_K8S_SELECT_WORKLOAD_ENTRIES) and the xDS cache.
 */
@injectable()
export class PushOptionsFromSettings implements PushCoordinatorOptions {
  readonly domain: string;
  readonly clusterId: string;
  readonly debounceAfterMs: number;
  readonly debounceMaxMs: number;
  readonly edsDebounce: boolean;
  readonly extraServiceEntries: readonly ConfigResource<ServiceEntrySpec>[];
  readonly platformRegistries: readonly PlatformRegistry[];
  readonly selectWorkloadEntries: boolean;
  readonly cache: XdsCache | undefined;

  constructor(
    @inject(DaemonFlagsToken) flags: DaemonFlags,
    @inject(SettingsToken) settings: Settings,
    @inject(MeshConfig) private readonly meshConfig: MeshConfig,
    @inject(MeshNetworks) private readonly meshNetworks: MeshNetworks,
    @inject(ServiceRegistries) registries: ServiceRegistries,
    @inject(DaemonMetrics) metrics: DaemonMetrics,
    @inject(MulticlusterRegistry) orch: MulticlusterRegistry,
  ) {
    this.domain = flags.domain;
    this.clusterId = clusterIdOf(flags, settings);
    this.debounceAfterMs = settings.duration('PILOT_DEBOUNCE_AFTER').milliseconds;
    this.debounceMaxMs = settings.duration('PILOT_DEBOUNCE_MAX').milliseconds;
    this.edsDebounce = settings.bool('PILOT_ENABLE_EDS_DEBOUNCE');
    this.extraServiceEntries = registries.serviceEntries();
    // The local cluster's registry and the remote clusters'; empty until the daemon starts them (only with an orchestrator to talk to).
    this.platformRegistries = registries.has('Orch') ? [orch] : [];
    this.selectWorkloadEntries = settings.bool('PILOT_ENABLE_K8S_SELECT_WORKLOAD_ENTRIES');
    this.cache = xdsCacheFrom(settings, metrics);
  }

  get mesh(): MeshConfigValues {
    return this.meshConfig.current();
  }

  get rootNamespace(): string {
    return this.meshConfig.current().rootNamespace;
  }

  /** Networks for endpoints that name none, from the mesh networks in force. */
  networks(): NetworkAssignment {
    const values = this.meshNetworks.current();
    if (this.assignment?.values !== values) this.assignment = { values, assignment: new NetworkAssignment(values) };
    return this.assignment.assignment;
  }

  private assignment: { values: ReturnType<MeshNetworks['current']>; assignment: NetworkAssignment } | undefined;
}

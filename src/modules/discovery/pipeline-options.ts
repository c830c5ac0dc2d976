import { inject, injectable } from 'inversify';
import { ServiceEntrySpec } from '../config/kinds/service-entry';
import { ConfigResource } from '../config/resource';
import { MeshConfig } from '../mesh-config';
import { XdsCache } from '../model/xds-cache';
import { DaemonMetrics } from '../monitoring';
import { OrchServiceRegistry, PlatformRegistry, ServiceRegistries } from '../registry';
import { Settings, SettingsToken } from '../settings';
import { DaemonFlags, DaemonFlagsToken } from './daemon-flags';
import { xdsCacheFrom } from './observers';
import { PushCoordinatorOptions } from './push-coordinator';

/**
 * The push pipeline's options: `--domain`, the mesh config's root namespace, the debounce
 * settings (PILOT_DEBOUNCE_AFTER/MAX, PILOT_ENABLE_EDS_DEBOUNCE), the other registries'
 * services (Mock, Orch; PILOT_ENABLE_K8S_SELECT_WORKLOAD_ENTRIES) and the xDS cache.
 */
@injectable()
export class PushOptionsFromSettings implements PushCoordinatorOptions {
  readonly domain: string;
  readonly rootNamespace: string;
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
    @inject(MeshConfig) mesh: MeshConfig,
    @inject(ServiceRegistries) registries: ServiceRegistries,
    @inject(DaemonMetrics) metrics: DaemonMetrics,
    @inject(OrchServiceRegistry) orch: OrchServiceRegistry,
  ) {
    this.domain = flags.domain;
    this.rootNamespace = mesh.rootNamespace;
    this.debounceAfterMs = settings.duration('PILOT_DEBOUNCE_AFTER').milliseconds;
    this.debounceMaxMs = settings.duration('PILOT_DEBOUNCE_MAX').milliseconds;
    this.edsDebounce = settings.bool('PILOT_ENABLE_EDS_DEBOUNCE');
    this.extraServiceEntries = registries.serviceEntries();
    // Empty until the daemon starts it (only with an orchestrator to talk to).
    this.platformRegistries = registries.has('Orch') ? [orch] : [];
    this.selectWorkloadEntries = settings.bool('PILOT_ENABLE_K8S_SELECT_WORKLOAD_ENTRIES');
    this.cache = xdsCacheFrom(settings, metrics);
  }
}

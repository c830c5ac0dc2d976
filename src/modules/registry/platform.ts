/**
 * A platform registry: services and endpoints that come from outside the config store (the
 * orchestrator's Services and EndpointSlices), kept current by the registry itself and merged
 * with ServiceEntries and WorkloadEntries into each push's registry snapshot.
 */
import { Service, ServiceEndpoint } from './model';

export interface PlatformService {
  readonly service: Service;
  /**
   * The service's workload selector: WorkloadEntries of its namespace with these labels join
   * its endpoints (PILOT_ENABLE_K8S_SELECT_WORKLOAD_ENTRIES). Absent: no selector.
   */
  readonly selector?: Readonly<Record<string, string>>;
  /** Service port number → the workload port it targets, by number or by port name. */
  readonly targetPorts: ReadonlyMap<number, number | string>;
}

export interface PlatformRegistrySnapshot {
  /** By host name. */
  readonly services: ReadonlyMap<string, PlatformService>;
  /** By host name, then service port number. */
  readonly endpoints: ReadonlyMap<string, ReadonlyMap<number, readonly ServiceEndpoint[]>>;
}

/** What changed for one host: its service definition (`service`) or only its endpoints. */
export interface PlatformRegistryEvent {
  readonly host: string;
  readonly what: 'service' | 'endpoints';
  readonly type: 'added' | 'updated' | 'deleted';
}

export interface PlatformRegistry {
  /** As in `--registries`, e.g. `Orch`. */
  readonly name: string;
  /** The registry now; an unchanged host keeps the same objects from one snapshot to the next. */
  snapshot(): PlatformRegistrySnapshot;
  /** Called once per batch of real changes (never for a relist of unchanged objects). */
  onChange(listener: (events: readonly PlatformRegistryEvent[]) => void): () => void;
}

export const EMPTY_PLATFORM_SNAPSHOT: PlatformRegistrySnapshot = { services: new Map(), endpoints: new Map() };

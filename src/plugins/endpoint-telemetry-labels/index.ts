import { inject } from 'inversify';
import { EndpointContributor } from '../../modules/model/generator';
import { MESH_METADATA_KEY } from '../../modules/generators/common';
import { meshPlugin } from '../../modules/plugins/decorator';
import { ServiceEndpoint } from '../../modules/registry/model';
import { CLUSTER_LABEL } from '../../modules/registry/orch/convert';
import { Settings, SettingsToken } from '../../modules/settings/settings';

/** Labels naming a workload's canonical service and revision, first found wins (the incumbent's order). */
export const CANONICAL_NAME_LABELS = ['service.mesh.io/canonical-name', 'app.kubernetes.io/name', 'app'];
export const CANONICAL_REVISION_LABELS = ['service.mesh.io/canonical-revision', 'app.kubernetes.io/version', 'version'];

/** `WorkloadEntry/<ns>/<name>` → name; `ServiceEntry/<ns>/<name>#<i>` (inline endpoints) → the ServiceEntry's name. */
export function workloadName(workload: string): string {
  const name = workload.split('/')[2] ?? '';
  const hash = name.indexOf('#');
  return hash >= 0 ? name.slice(0, hash) : name;
}

/**
 * `<workload>;<namespace>;<canonical service>;<canonical revision>;<cluster>`: the canonical
 * service defaults to the workload name, a `latest` (or absent) revision is left empty.
 */
export function workloadTelemetry(endpoint: ServiceEndpoint, clusterId: string): string {
  const name = workloadName(endpoint.workload);
  const first = (keys: string[]) => keys.map((k) => endpoint.labels[k]).find((v) => v !== undefined && v !== '');
  const canonicalName = first(CANONICAL_NAME_LABELS) ?? name;
  const revision = first(CANONICAL_REVISION_LABELS) ?? 'latest';
  return [name, endpoint.namespace, canonicalName, revision === 'latest' ? '' : revision, clusterId].join(';');
}

/**
 * The compressed workload telemetry of each endpoint, as the incumbent sends it so a client can
 * name a server that has no sidecar, or that it never reached: `metadata.filter_metadata.mesh.workload`.
 * Like the incumbent it also needs PILOT_ENABLE_TELEMETRY_LABEL; the cluster is this daemon's
 * CLUSTER_ID, or the endpoint's own cluster label (an endpoint of a remote cluster).
 */
@meshPlugin({
  name: 'endpoint-telemetry-labels',
  enabledBy: 'PILOT_ENDPOINT_TELEMETRY_LABEL',
  provides: [EndpointContributor],
  description: 'workload telemetry metadata (workload;namespace;service;revision;cluster) on EDS endpoints',
})
export class EndpointTelemetryLabelsPlugin implements EndpointContributor {
  private readonly enabled: boolean;
  private readonly clusterId: string;

  constructor(@inject(SettingsToken) settings: Settings) {
    this.enabled = settings.bool('PILOT_ENABLE_TELEMETRY_LABEL');
    this.clusterId = settings.string('CLUSTER_ID');
  }

  patchEndpoint(lbEndpoint: Record<string, unknown>, endpoint: ServiceEndpoint): void {
    // An endpoint without a workload (a DNS service resolving its own host name) has nothing to name.
    if (!this.enabled || !endpoint.workload) return;
    const metadata = (lbEndpoint.metadata ??= {}) as Record<string, unknown>;
    const filterMetadata = (metadata.filter_metadata ??= {}) as Record<string, unknown>;
    const struct = (filterMetadata[MESH_METADATA_KEY] ??= { fields: {} }) as { fields?: Record<string, unknown> };
    // A remote cluster's endpoint names its own cluster (its cluster label), not this daemon's.
    const cluster = endpoint.labels[CLUSTER_LABEL] || this.clusterId;
    struct.fields = { ...struct.fields, workload: { string_value: workloadTelemetry(endpoint, cluster) } };
  }
}

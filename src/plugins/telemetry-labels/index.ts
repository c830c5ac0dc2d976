import { ClusterContributor } from '../../modules/model/generator';
import { MESH_METADATA_KEY, serviceShortName } from '../../modules/generators/common';
import { parseClusterName } from '../../modules/model/naming';
import { Proxy } from '../../modules/model/proxy';
import { PushContext } from '../../modules/model/push-context';
import { Service, ServicePort } from '../../modules/registry/model';
import { jsonToValue } from '../../modules/envoy/struct';
import { meshPlugin } from '../../modules/plugins/decorator';

type Obj = Record<string, unknown>;

/** `metadata.filter_metadata.mesh` of a plain cluster, created when missing; existing fields are kept. */
export function meshStruct(target: Obj): { fields: Record<string, Obj> } {
  const metadata = (target.metadata ??= {}) as Obj;
  const filterMetadata = (metadata.filter_metadata ??= {}) as Obj;
  const struct = (filterMetadata[MESH_METADATA_KEY] ??= { fields: {} }) as { fields?: Record<string, Obj> };
  struct.fields ??= {};
  return struct as { fields: Record<string, Obj> };
}

/**
 * The services telemetry names a cluster by (`services: [{ host, name, namespace }]` in the
 * mesh's cluster metadata), as the incumbent: an outbound cluster carries its service; an
 * inbound cluster every service the workload serves on that port (a workload behind two
 * services sharing a port reports both). Entries already there are kept; hosts are not repeated.
 */
@meshPlugin({
  name: 'telemetry-labels',
  enabledBy: 'PILOT_ENABLE_TELEMETRY_LABEL',
  provides: [ClusterContributor],
  description: 'service telemetry metadata (services: host, name, namespace) on outbound and inbound clusters',
})
export class TelemetryLabelsPlugin implements ClusterContributor {
  patchCluster(cluster: Obj, context: { proxy: Proxy; push: PushContext; service: Service; port: ServicePort }): void {
    const parsed = parseClusterName(String(cluster.name));
    if (!parsed) return;
    const services = parsed.direction === 'inbound' ? inboundServices(context.push, context.proxy, context.port, context.service) : [context.service];
    const fields = meshStruct(cluster).fields;
    const list = ((fields.services as { list_value?: { values?: Obj[] } } | undefined)?.list_value?.values ?? []) as Obj[];
    const have = new Set(list.map(hostOf));
    for (const s of services) {
      if (have.has(s.hostname)) continue;
      have.add(s.hostname);
      list.push(jsonToValue({ host: s.hostname, name: serviceShortName(context.push, s), namespace: s.namespace }));
    }
    fields.services = { list_value: { values: list } };
  }
}

/** The cluster's own service first, then the other services of the proxy's instances on the same service port, by host. */
function inboundServices(push: PushContext, proxy: Proxy, port: ServicePort, own: Service): Service[] {
  const hosts = new Set(push.serviceInstancesOf(proxy).filter((ep) => ep.servicePort.number === port.number).map((ep) => ep.hostname));
  hosts.delete(own.hostname);
  const others = [...hosts].sort().map((h) => push.service(h)).filter((s): s is Service => s !== undefined && s.location !== 'MESH_EXTERNAL');
  return [own, ...others];
}

function hostOf(value: Obj): string | undefined {
  const fields = (value.struct_value as { fields?: Record<string, { string_value?: string }> } | undefined)?.fields;
  return fields?.host?.string_value;
}

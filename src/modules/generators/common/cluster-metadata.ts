/** The mesh's own cluster metadata: which services (and subset) a cluster stands for. */
import { PushContext } from '../../model/push-context';
import { Service } from '../../registry/model';
import { jsonToStruct } from '../../envoy/struct';

type Obj = Record<string, unknown>;

/** `filter_metadata` key of the mesh's own cluster metadata. */
export const MESH_METADATA_KEY = 'mesh';

/** The short service name used in metadata: `<name>` of `<name>.<ns>.svc.<domain>`, else the host. */
export function serviceShortName(push: PushContext, service: Service): string {
  const suffix = `.${service.namespace}.svc.${push.options.domain}`;
  return service.hostname.endsWith(suffix) ? service.hostname.slice(0, -suffix.length) : service.hostname;
}

/** `metadata.filter_metadata.mesh` of a cluster: the services behind it and the subset. */
export function clusterMetadata(push: PushContext, service: Service, subset: string): Obj {
  const meta: Obj = { services: [{ host: service.hostname, name: serviceShortName(push, service), namespace: service.namespace }] };
  if (subset) meta.subset = subset;
  return { filter_metadata: { [MESH_METADATA_KEY]: jsonToStruct(meta) } };
}

import { typeUrlOf } from '../../modules/envoy/type-urls';
import { MESH_PROTO_ROOT } from '../../modules/envoy/protos';
import { meshPlugin } from '../../modules/plugins/decorator';
import { ProtoContribution } from '../../modules/plugins/proto-registry';

export const ALPN_FILTER_TYPE = typeUrlOf('mesh.filters.http.alpn.v1.FilterConfig');

/** The filter's config message, so the daemon can encode it and the agent decode it. */
@meshPlugin({ name: 'alpn-filter', enabledBy: 'PILOT_ENABLE_ALPN_FILTER', provides: [ProtoContribution] })
export class AlpnFilterProtos implements ProtoContribution {
  readonly protoRoot = MESH_PROTO_ROOT;
  readonly protoFiles = ['mesh/filters/http/alpn/v1/alpn.proto'];
}

import { typeUrlOf } from '../../modules/envoy/type-urls';
import { MESH_PROTO_ROOT } from '../../modules/envoy/protos';
import { meshPlugin } from '../../modules/plugins/decorator';
import { ProtoContribution } from '../../modules/plugins/proto-registry';

export const METADATA_EXCHANGE_TYPE = typeUrlOf('mesh.filters.network.metadata_exchange.v1.MetadataExchange');

/** The filter's config message, so the daemon can encode it and the agent decode it. */
@meshPlugin({ name: 'metadata-exchange', enabledBy: 'PILOT_ENABLE_METADATA_EXCHANGE', provides: [ProtoContribution] })
export class MetadataExchangeProtos implements ProtoContribution {
  readonly protoRoot = MESH_PROTO_ROOT;
  readonly protoFiles = ['mesh/filters/network/metadata_exchange/v1/metadata_exchange.proto'];
}

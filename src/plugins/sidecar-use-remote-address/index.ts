import { FilterChainContext, HttpConnectionManagerContributor } from '../../modules/model/generator';
import { meshPlugin } from '../../modules/plugins/decorator';

/** Sidecar outbound HTTP connection managers take the peer address as the client address (`use_remote_address`). */
@meshPlugin({
  name: 'sidecar-use-remote-address',
  enabledBy: 'PILOT_SIDECAR_USE_REMOTE_ADDRESS',
  provides: [HttpConnectionManagerContributor],
  description: 'use_remote_address on sidecar outbound HTTP connection managers',
})
export class SidecarUseRemoteAddressPlugin implements HttpConnectionManagerContributor {
  patchConnectionManager(hcm: Record<string, unknown>, context: FilterChainContext): void {
    if (context.direction === 'outbound') hcm.use_remote_address = { value: true };
  }
}

import { FilterChainContext, HttpConnectionManagerContributor } from '../../modules/model/generator';
import { meshPlugin } from '../../modules/plugins/decorator';

/** Outbound HTTP connection managers accept HTTP/1.0 requests (`http_protocol_options.accept_http_10`). */
@meshPlugin({
  name: 'http10',
  enabledBy: 'PILOT_HTTP10',
  provides: [HttpConnectionManagerContributor],
  description: 'outbound HTTP connection managers accept HTTP/1.0',
})
export class Http10Plugin implements HttpConnectionManagerContributor {
  patchConnectionManager(hcm: Record<string, unknown>, context: FilterChainContext): void {
    if (context.direction !== 'outbound') return;
    hcm.http_protocol_options = { ...(hcm.http_protocol_options as Record<string, unknown> | undefined), accept_http_10: true };
  }
}

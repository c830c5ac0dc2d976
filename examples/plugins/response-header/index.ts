/**
 * An example third-party plugin, loaded with `MESH_PLUGINS=<this module>` by the daemon and the
 * agent: the HTTP filter `example.response_header` sets a response header on inbound HTTP
 * traffic. Its parts, one per contribution point, share the plugin's name and enabling setting;
 * each program instantiates only those whose point it asks for.
 */
import * as path from 'node:path';
import { EnvoyFilter, FilterChainContext, HttpFilterContributor, inject, meshPlugin, ProtoContribution, SettingDefinition, Settings, SettingsToken } from 'mesh';
import { RESPONSE_HEADER_FILTER, RESPONSE_HEADER_TYPE } from './proxy-filter';

export { ResponseHeaderProxyFilter } from './proxy-filter';

const ENABLED = 'EXAMPLE_RESPONSE_HEADER';

/** The plugin's settings, added to the catalogue when the module is loaded. */
export const settings: SettingDefinition[] = [
  {
    name: ENABLED,
    type: 'B',
    default: 'false',
    meaning: 'the response-header example plugin: the daemon adds example.response_header to inbound HTTP chains, the built-in proxy runs it',
    programs: ['pilot-discovery', 'pilot-agent'],
  },
  { name: 'EXAMPLE_RESPONSE_HEADER_NAME', type: 'S', default: 'x-mesh-served-by', meaning: 'the response header it sets', programs: ['pilot-discovery'] },
  {
    name: 'EXAMPLE_RESPONSE_HEADER_VALUE',
    type: 'S',
    default: '%SERVICE%',
    meaning: 'its value: text with %SERVICE%, %METHOD%, %PATH%, %RESPONSE_CODE% and %REQ(<request header>)%',
    programs: ['pilot-discovery'],
  },
];

/** The daemon's part: the filter, last among the contributed filters of inbound HTTP chains. */
@meshPlugin({
  name: 'response-header',
  enabledBy: ENABLED,
  provides: [HttpFilterContributor],
  phase: 'last',
  description: 'example.response_header on inbound HTTP: a response header from EXAMPLE_RESPONSE_HEADER_NAME/_VALUE',
})
export class ResponseHeaderGenerator implements HttpFilterContributor {
  private readonly headerName: string;
  private readonly valueTemplate: string;

  constructor(@inject(SettingsToken) settings: Settings) {
    this.headerName = String(settings.resolve('EXAMPLE_RESPONSE_HEADER_NAME').value);
    this.valueTemplate = String(settings.resolve('EXAMPLE_RESPONSE_HEADER_VALUE').value);
  }

  httpFilters(context: FilterChainContext): EnvoyFilter[] {
    if (context.direction !== 'inbound') return [];
    const config = { '@type': RESPONSE_HEADER_TYPE, header_name: this.headerName, value_template: this.valueTemplate, service: context.service?.hostname ?? '' };
    // Not is_optional: a proxy that cannot set the header rejects the listener rather than serve without it.
    return [{ name: RESPONSE_HEADER_FILTER, typed_config: config }];
  }
}

/** Its config message, which the daemon encodes and the agent decodes: the proto ships next to this module. */
@meshPlugin({ name: 'response-header', enabledBy: ENABLED, provides: [ProtoContribution] })
export class ResponseHeaderProtos implements ProtoContribution {
  readonly protoRoot = path.join(__dirname, 'proto');
  readonly protoFiles = ['example/filters/http/response_header/v1/config.proto'];
}

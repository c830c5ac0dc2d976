/**
 * Which HTTP and network filters the built-in proxy runs, by typed_config type URL. Filters
 * that cannot change what a request gets in this proxy are accepted and skipped; any other
 * unknown filter makes the config fail (NACK) unless it is marked optional, as Envoy does.
 */
import { FilterContext, HttpFilter, HttpFilterFactory, NetworkFilter, NetworkFilterFactory } from './filter-api';
import { CORS_TYPE, FAULT_TYPE, HCM_TYPE, ROUTER_TYPE, TCP_PROXY_TYPE } from '../../envoy/well-known';

type Decoded = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export { ROUTER_TYPE, HCM_TYPE, TCP_PROXY_TYPE };

/**
 * Filters with nothing to do here: CORS and fault act only through per-route config this proxy
 * does not apply (said in the log once per listener); ALPN and metadata exchange concern
 * upstream TLS and peer telemetry, which this proxy does not do.
 */
const SKIPPED_HTTP = new Set([
  CORS_TYPE,
  FAULT_TYPE,
  'type.googleapis.com/mesh.filters.http.alpn.v1.FilterConfig',
]);
const SKIPPED_NETWORK = new Set(['type.googleapis.com/mesh.filters.network.metadata_exchange.v1.MetadataExchange']);

export class FilterRegistry {
  private readonly http = new Map<string, HttpFilterFactory>();
  private readonly network = new Map<string, NetworkFilterFactory>();

  constructor(httpFactories: readonly HttpFilterFactory[], networkFactories: readonly NetworkFilterFactory[]) {
    for (const f of httpFactories) this.http.set(f.typeUrl, f);
    for (const f of networkFactories) this.network.set(f.typeUrl, f);
  }

  /** The filters to run for an HCM's `http_filters`, without the terminal router. */
  httpFilters(list: readonly Decoded[], context: FilterContext): HttpFilter[] {
    const out: HttpFilter[] = [];
    let routerSeen = false;
    for (const f of list) {
      const typeUrl = String(f.typed_config?.['@type'] ?? '');
      if (typeUrl === ROUTER_TYPE) {
        routerSeen = true;
        continue;
      }
      if (routerSeen) throw new Error(`http filter ${f.name} comes after the router`);
      const factory = this.http.get(typeUrl);
      if (factory) out.push(factory.create(String(f.name), f.typed_config, context));
      else if (SKIPPED_HTTP.has(typeUrl) || f.is_optional) context.log('debug', `http filter ${f.name} (${typeUrl}) has no effect in the built-in proxy`);
      else throw new Error(`http filter ${f.name}: ${typeUrl || 'no typed_config'} is not supported by the built-in proxy`);
    }
    if (!routerSeen) throw new Error('http filters end without envoy.filters.http.router');
    return out;
  }

  /** A network filter before the terminal one; undefined for a skipped filter. */
  networkFilter(f: Decoded, context: FilterContext): NetworkFilter | undefined {
    const typeUrl = String(f.typed_config?.['@type'] ?? '');
    const factory = this.network.get(typeUrl);
    if (factory) return factory.create(String(f.name), f.typed_config, context);
    if (SKIPPED_NETWORK.has(typeUrl)) return undefined;
    throw new Error(`network filter ${f.name}: ${typeUrl || 'no typed_config'} is not supported by the built-in proxy`);
  }
}

/**
 * Which HTTP and network filters the built-in proxy runs, by typed_config type URL: those the
 * factories contributed to the proxy (its core and the enabled plugins) know. As in Envoy, any
 * other filter makes the listener update fail (NACK), unless it is an HTTP filter marked
 * `is_optional`, which is skipped.
 */
import { loggerForFilter } from '../logging/proxy-loggers';
import { FilterContext, HttpFilter, HttpFilterFactory, NetworkFilter, NetworkFilterFactory } from './filter-api';
import { HCM_TYPE, ROUTER_TYPE, TCP_PROXY_TYPE } from '../../envoy/well-known';

type Decoded = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export { ROUTER_TYPE, HCM_TYPE, TCP_PROXY_TYPE };

/** The type URL of a decoded typed_config: `@type` when its proto is loaded, else the raw Any's `type_url`. */
export function typedConfigType(typedConfig: Decoded | undefined): string {
  return String(typedConfig?.['@type'] ?? typedConfig?.type_url ?? '');
}

export class FilterRegistry {
  private readonly http = new Map<string, HttpFilterFactory>();
  private readonly network = new Map<string, NetworkFilterFactory>();
  /** Optional filters already reported as skipped: said once, not on every listener update. */
  private readonly skipped = new Set<string>();

  constructor(httpFactories: readonly HttpFilterFactory[], networkFactories: readonly NetworkFilterFactory[]) {
    for (const f of httpFactories) this.http.set(f.typeUrl, f);
    for (const f of networkFactories) this.network.set(f.typeUrl, f);
  }

  /** The filters to run for an HCM's `http_filters`, without the terminal router. */
  httpFilters(list: readonly Decoded[], context: FilterContext): HttpFilter[] {
    const out: HttpFilter[] = [];
    let routerSeen = false;
    for (const f of list) {
      const typeUrl = typedConfigType(f.typed_config);
      if (typeUrl === ROUTER_TYPE) {
        routerSeen = true;
        continue;
      }
      if (routerSeen) throw new Error(`http filter ${f.name} comes after the router`);
      const factory = this.http.get(typeUrl);
      if (factory) out.push(factory.create(String(f.name), f.typed_config, filterContext(context, typeUrl)));
      else if (f.is_optional) this.skip(`http filter ${f.name}`, typeUrl, context);
      else throw new Error(`http filter ${f.name}: ${typeUrl || 'no typed_config'} is not supported by the built-in proxy (and the filter is not is_optional)`);
    }
    if (!routerSeen) throw new Error('http filters end without envoy.filters.http.router');
    return out;
  }

  /** A network filter before the terminal one. Network filters have no `is_optional`: an unknown one fails. */
  networkFilter(f: Decoded, context: FilterContext): NetworkFilter {
    const typeUrl = typedConfigType(f.typed_config);
    const factory = this.network.get(typeUrl);
    if (factory) return factory.create(String(f.name), f.typed_config, filterContext(context, typeUrl));
    throw new Error(`network filter ${f.name}: ${typeUrl || 'no typed_config'} is not supported by the built-in proxy`);
  }

  private skip(what: string, typeUrl: string, context: FilterContext): void {
    if (this.skipped.has(typeUrl)) return;
    this.skipped.add(typeUrl);
    const message = `${what} (${typeUrl || 'no typed_config'}) is optional and not supported by the built-in proxy: skipped`;
    if (context.loggers) context.loggers.get('config').info(message);
    else context.log('info', message);
  }
}

/** The context a filter gets: its `log` is the proxy logger of its kind (jwt, rbac...), by type URL. */
function filterContext(context: FilterContext, typeUrl: string): FilterContext {
  if (!context.loggers) return context;
  const logger = context.loggers.get(loggerForFilter(typeUrl));
  return { ...context, log: logger.asLog(), debugEnabled: () => logger.enabled('debug') };
}

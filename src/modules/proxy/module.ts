import { ContainerModule } from 'inversify';
import { declareContributionPoint } from '../plugins/contribution-provider';
import { BuiltInProxy } from './builtin-proxy';
import { ProxyHttpFilterFactory, ProxyNetworkFilterFactory, ProxyTransportSocketFactory } from './contributions';
import { TLS_TRANSPORT_SOCKETS } from './tls/contexts';
import { CORE_HTTP_FILTERS } from './core-filters';

/** The built-in proxy and its contribution points; the core contributes CORS and fault, and TLS transport sockets. */
export function proxyModule(): ContainerModule {
  return new ContainerModule((bind) => {
    declareContributionPoint(bind, ProxyHttpFilterFactory);
    declareContributionPoint(bind, ProxyNetworkFilterFactory);
    declareContributionPoint(bind, ProxyTransportSocketFactory);
    for (const factory of TLS_TRANSPORT_SOCKETS) bind(ProxyTransportSocketFactory).toConstantValue(factory);
    for (const factory of CORE_HTTP_FILTERS) bind(ProxyHttpFilterFactory).toConstantValue(factory);
    bind(BuiltInProxy).toSelf().inSingletonScope();
  });
}

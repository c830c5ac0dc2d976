import { ContainerModule } from 'inversify';
import { declareContributionPoint } from '../plugins/contribution-provider';
import { BuiltInProxy } from './builtin-proxy';
import { ProxyHttpFilterFactory, ProxyNetworkFilterFactory } from './contributions';
import { CORE_HTTP_FILTERS } from './core-filters';

/** The built-in proxy and its filter contribution points; the core contributes CORS and fault. */
export function proxyModule(): ContainerModule {
  return new ContainerModule((bind) => {
    declareContributionPoint(bind, ProxyHttpFilterFactory);
    declareContributionPoint(bind, ProxyNetworkFilterFactory);
    for (const factory of CORE_HTTP_FILTERS) bind(ProxyHttpFilterFactory).toConstantValue(factory);
    bind(BuiltInProxy).toSelf().inSingletonScope();
  });
}

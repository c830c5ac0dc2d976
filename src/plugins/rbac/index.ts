export { RbacHttpFilterPlugin, RbacNetworkFilterPlugin } from './generator';
export { RbacProxyHttpFilter, RbacProxyNetworkFilter } from './proxy-filter';

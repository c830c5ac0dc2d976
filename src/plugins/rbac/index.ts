export { RbacProxyHttpFilter, RbacProxyNetworkFilter } from './proxy-filter';

export { RbacHttpFilterPlugin, RbacNetworkFilterPlugin } from './generator';

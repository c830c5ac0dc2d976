export { JwtAuthnFilterPlugin } from './generator';
export { JwtAuthnProxyFilter } from './proxy-filter';

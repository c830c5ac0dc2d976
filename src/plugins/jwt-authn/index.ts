export { JwtAuthnProxyFilter } from './proxy-filter';

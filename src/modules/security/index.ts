/** Security: CA, request authentication (jwt_authn), authorization (RBAC), mesh mTLS, TLS. */
export { securityModule } from './module';
export { DaemonCaSettings } from './mesh-options';

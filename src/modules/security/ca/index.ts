/**
 * The mesh's certificate authority: key material, plugged-in and self-signed CA sources, the
 * root rotator, workload and server certificate issuance, caller authentication (bearer JWT,
 * client certificate, node authorization), the `mesh.v1.auth.MeshCertificateService` gRPC
 * service, its metrics and its settings.
 */
export { MeshCertificateAuthority, CertificateAuthorityOptions, RootRotationOptions, SignRequest, SignResult, ServerCertificate } from './authority';
export { CaMode } from './ca-source';
export { Certificate, parseCertificates } from './certificate';
export { AuthenticationError, CaConfigError, CsrParseError, IdentityExtractionError, PermissionDeniedError, SignError } from './errors';
export { KeyPair, KeySpec, EcCurve, generateKeyPair, keyPairFromPem, privateKeyToPem } from './keys';
export { WorkloadCertTtl, workloadLifetimeMs } from './lifetime';
export { CaLogger } from './logger';
export { CaMetrics, CaMetricsOptions, CaExpirySource } from './metrics';
export { CaOptions, CaOverrides, caOptionsFrom, DEFAULT_TRUST_DOMAIN } from './options';
export { CA_CERT_FILE, CA_KEY_FILE, CERT_CHAIN_FILE, ROOT_CERT_FILE } from './plugged-in';
export { x509Library } from './x509';
export { SELF_SIGNED_CERT_FILE, SELF_SIGNED_KEY_FILE, PREVIOUS_ROOTS_FILE } from './self-signed-store';
export { RootsListener } from './trust-bundle';
export { Authenticator, CallCredentials, Caller, authenticateCall } from './authn/authenticator';
export { ClientCertAuthenticator, TrustSource } from './authn/client-cert-authenticator';
export { JwtAuthenticator, JwtAuthenticatorOptions, TokenKeySource, bearerToken } from './authn/jwt-authenticator';
export { JwtRule, parseJwtRule } from './authn/jwt-rule';
export { IdentitiesOnNode, NodeAccount, NodeAuthorizer, NodeAuthorizerOptions, parseNodeAccounts } from './authn/node-authorizer';
export { identityOfSubject, parseSpiffeId, spiffeId, WorkloadIdentity } from './authn/spiffe';
export { CA_SERVICE_NAME, MeshCertificateRequest, MeshCertificateResponse, caClientConstructor, caServiceDefinition } from './grpc/definition';
export {
  CertificateServiceOptions,
  CertificateSigner,
  IMPERSONATED_IDENTITY_FIELD,
  IMPERSONATED_IDENTITY_METADATA,
  createCertificateService,
} from './grpc/service';
export { authenticatorsFor, certificateServiceFor } from './wiring';

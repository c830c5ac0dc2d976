/**
 * Puts the pieces together the way the daemon serves them: the CA from its options, and the
 * certificate service with the bearer-JWT authenticator first (its token names the node,
 * which node authorization needs), then the client-certificate one (renewal).
 */
import * as grpc from '@grpc/grpc-js';
import { MeshCertificateAuthority } from './authority';
import { Authenticator } from './authn/authenticator';
import { ClientCertAuthenticator } from './authn/client-cert-authenticator';
import { JwtAuthenticator } from './authn/jwt-authenticator';
import { NodeAuthorizer } from './authn/node-authorizer';
import { createCertificateService } from './grpc/service';
import { CaLogger } from './logger';
import { CaMetrics } from './metrics';
import { CaOptions } from './options';

export function authenticatorsFor(ca: MeshCertificateAuthority, options: CaOptions): Authenticator[] {
  return [new JwtAuthenticator(options.authentication), new ClientCertAuthenticator(ca, options.authentication.now)];
}

/** The CreateCertificate implementation for `ca`, authenticating and authorizing per `options`. */
export function certificateServiceFor(
  ca: MeshCertificateAuthority,
  options: CaOptions,
  extras: { metrics?: CaMetrics; logger?: CaLogger } = {},
): grpc.UntypedServiceImplementation {
  extras.metrics?.watch(ca);
  return createCertificateService({
    ca,
    authenticators: authenticatorsFor(ca, options),
    nodeAuthorizer: new NodeAuthorizer(options.nodeAuthorization),
    metrics: extras.metrics,
    logger: extras.logger,
  });
}

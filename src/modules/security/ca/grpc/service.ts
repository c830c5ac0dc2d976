/**
 * `mesh.v1.auth.MeshCertificateService/CreateCertificate`: authenticate the caller, settle
 * which identity it may have (its own, or with node authorization another one), sign the
 * CSR's key for it. Each failure kind has its status code and its own metric:
 *
 * | failure                                   | status            | metric                                  |
 * |-------------------------------------------|-------------------|-----------------------------------------|
 * | missing or bad credential                 | UNAUTHENTICATED   | ca_server_authentication_failure_count  |
 * | credential without a mesh identity        | UNAUTHENTICATED   | ca_server_id_extraction_err_count       |
 * | impersonation not allowed                 | PERMISSION_DENIED | ca_server_authentication_failure_count  |
 * | CSR does not parse / verify               | INVALID_ARGUMENT  | ca_server_csr_parsing_err_count         |
 * | signing failed                            | INTERNAL          | ca_server_csr_sign_err_count            |
 *
 * Every request counts in ca_server_csr_count, every certificate issued in
 * ca_server_success_cert_issuance_count.
 */
import type * as grpc from '@grpc/grpc-js';
import { grpcLibrary } from '../../../shared/grpc-library';
import { Authenticator, authenticateCall, Caller } from '../authn/authenticator';
import { NodeAuthorizer } from '../authn/node-authorizer';
import { AuthenticationError, CsrParseError, IdentityExtractionError, messageOf, PermissionDeniedError } from '../errors';
import { CaLogger, SILENT_LOGGER } from '../logger';
import { CaMetrics } from '../metrics';
import { MeshCertificateRequest, MeshCertificateResponse } from './definition';

/** gRPC metadata key in which a trusted node agent names the identity it asks a certificate for. */
export const IMPERSONATED_IDENTITY_METADATA = 'impersonated-identity';
/** The same, as the incumbent's agents send it: a key of the request's `metadata` Struct. */
export const IMPERSONATED_IDENTITY_FIELD = 'ImpersonatedIdentity';

export interface CertificateSigner {
  sign(request: { csrPem: string; identities: readonly string[]; ttlSeconds: number }): Promise<{ certChain: string[] }>;
}

export interface CertificateServiceOptions {
  ca: CertificateSigner;
  /** Tried in order; the first that recognizes the caller wins. */
  authenticators: readonly Authenticator[];
  /** CA_TRUSTED_NODE_ACCOUNTS; without it every impersonation request is refused. */
  nodeAuthorizer?: NodeAuthorizer;
  metrics?: CaMetrics;
  logger?: CaLogger;
}

type Call = grpc.ServerUnaryCall<MeshCertificateRequest, MeshCertificateResponse>;

class RequestFailure extends Error {
  constructor(
    readonly code: grpc.status,
    message: string,
  ) {
    super(message);
  }
}

export function createCertificateService(options: CertificateServiceOptions): grpc.UntypedServiceImplementation {
  const logger = options.logger ?? SILENT_LOGGER;
  const metrics = options.metrics;

  async function createCertificate(call: Call): Promise<MeshCertificateResponse> {
    metrics?.csrs.inc();
    const caller = await authenticate(call);
    const identities = authorize(caller, call);
    try {
      const { certChain } = await options.ca.sign({
        csrPem: call.request.csr,
        identities,
        ttlSeconds: Number(call.request.validity_duration ?? 0),
      });
      metrics?.successfulIssuances.inc();
      logger.debug(`issued a certificate for ${identities.join(', ')} (authenticated by ${caller.authenticator})`);
      return { cert_chain: certChain };
    } catch (err) {
      if (err instanceof CsrParseError) {
        metrics?.csrParsingErrors.inc();
        throw new RequestFailure(grpcLibrary().status.INVALID_ARGUMENT, `invalid CSR: ${err.message}`);
      }
      metrics?.csrSignErrors.inc();
      logger.error(`signing a certificate for ${identities.join(', ')} failed: ${messageOf(err)}`);
      throw new RequestFailure(grpcLibrary().status.INTERNAL, `signing failed: ${messageOf(err)}`);
    }
  }

  async function authenticate(call: Call): Promise<Caller> {
    try {
      return await authenticateCall(options.authenticators, call);
    } catch (err) {
      if (err instanceof IdentityExtractionError) {
        metrics?.idExtractionErrors.inc();
      } else if (err instanceof AuthenticationError) {
        metrics?.authenticationFailures.inc();
      } else {
        throw err;
      }
      logger.warn(`certificate request from ${call.getPeer()} not authenticated: ${err.message}`);
      throw new RequestFailure(grpcLibrary().status.UNAUTHENTICATED, `authentication failed: ${err.message}`);
    }
  }

  function authorize(caller: Caller, call: Call): string[] {
    let requested: string | undefined;
    try {
      requested = impersonatedIdentity(call);
      if (requested === undefined) return caller.identities;
      if (!options.nodeAuthorizer) throw new PermissionDeniedError(`cannot impersonate ${requested}: no node accounts are trusted (CA_TRUSTED_NODE_ACCOUNTS is empty)`);
      return options.nodeAuthorizer.authorize(caller, requested);
    } catch (err) {
      if (!(err instanceof PermissionDeniedError)) throw err;
      metrics?.authenticationFailures.inc();
      logger.warn(`certificate request of ${caller.identities.join(', ')} refused: ${err.message}`);
      throw new RequestFailure(grpcLibrary().status.PERMISSION_DENIED, err.message);
    }
  }

  return {
    CreateCertificate(call: Call, callback: grpc.sendUnaryData<MeshCertificateResponse>) {
      createCertificate(call).then(
        (response) => callback(null, response),
        (err: unknown) => {
          const failure = err instanceof RequestFailure ? err : new RequestFailure(grpcLibrary().status.INTERNAL, messageOf(err));
          if (!(err instanceof RequestFailure)) logger.error(`certificate request failed unexpectedly: ${messageOf(err)}`);
          callback({ name: 'Error', message: failure.message, code: failure.code, details: failure.message });
        },
      );
    },
  };
}

/**
 * The identity the caller asks for instead of its own: the `impersonated-identity` metadata
 * or the request's `metadata.ImpersonatedIdentity`; both set and different is refused.
 */
function impersonatedIdentity(call: Call): string | undefined {
  const fromMetadata = call.metadata.get(IMPERSONATED_IDENTITY_METADATA).find((v): v is string => typeof v === 'string');
  const field = call.request.metadata?.fields?.[IMPERSONATED_IDENTITY_FIELD];
  const fromRequest = field?.stringValue ?? field?.string_value;
  const values = [fromMetadata, fromRequest].filter((v): v is string => v !== undefined && v !== '');
  if (values.length === 2 && values[0] !== values[1]) {
    throw new PermissionDeniedError(`the ${IMPERSONATED_IDENTITY_METADATA} metadata (${values[0]}) and the request's ${IMPERSONATED_IDENTITY_FIELD} (${values[1]}) differ`);
  }
  return values[0];
}

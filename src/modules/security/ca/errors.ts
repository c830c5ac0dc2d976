/**
 * Typed errors of the CA. The gRPC service maps each to its status code and its own
 * `ca_server_*` metric, so every failure kind must be distinguishable by class.
 */

/** The CA cannot start: missing, unreadable, invalid or mismatched key material. */
export class CaConfigError extends Error {
  override readonly name = 'CaConfigError';
}

/** The request's CSR does not parse, its signature does not verify, or its key is unsupported. */
export class CsrParseError extends Error {
  override readonly name = 'CsrParseError';
}

/** Signing failed after the request was accepted (expired signing certificate, bad identities, crypto failure). */
export class SignError extends Error {
  override readonly name = 'SignError';
}

/** The caller's credential is missing or does not verify. */
export class AuthenticationError extends Error {
  override readonly name: string = 'AuthenticationError';
}

/** The credential verified, but no mesh identity can be read from it (e.g. a token `sub` of another shape). */
export class IdentityExtractionError extends AuthenticationError {
  override readonly name = 'IdentityExtractionError';
}

/** The caller is authenticated but may not have what it asked for (impersonation). */
export class PermissionDeniedError extends Error {
  override readonly name = 'PermissionDeniedError';
}

/** The message of any thrown value. */
export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Envoy's JWT verification outcomes (jwt_verify_lib's Status): the message is the body of the
 * local reply, the code what `failed_status_in_metadata` reports.
 */
export interface JwtStatus {
  readonly name: string;
  readonly code: number;
  readonly message: string;
}

function status(name: string, code: number, message: string): JwtStatus {
  return Object.freeze({ name, code, message });
}

export const Status = {
  Ok: status('Ok', 0, 'OK'),
  JwtMissed: status('JwtMissed', 1, 'Jwt is missing'),
  JwtNotYetValid: status('JwtNotYetValid', 2, 'Jwt not yet valid'),
  JwtExpired: status('JwtExpired', 3, 'Jwt is expired'),
  JwtBadFormat: status('JwtBadFormat', 4, 'Jwt is not in the form of Header.Payload.Signature with two dots and 3 sections'),
  JwtHeaderParseErrorBadBase64: status('JwtHeaderParseErrorBadBase64', 5, 'Jwt header is an invalid Base64url encoded'),
  JwtHeaderParseErrorBadJson: status('JwtHeaderParseErrorBadJson', 6, 'Jwt header is an invalid JSON'),
  JwtHeaderBadAlg: status('JwtHeaderBadAlg', 7, 'Jwt header [alg] field is required and must be a string'),
  JwtHeaderNotImplementedAlg: status('JwtHeaderNotImplementedAlg', 8, 'Jwt header [alg] is not supported'),
  JwtHeaderBadKid: status('JwtHeaderBadKid', 9, 'Jwt header [kid] field is not a string'),
  JwtPayloadParseErrorBadBase64: status('JwtPayloadParseErrorBadBase64', 10, 'Jwt payload is an invalid Base64url encoded'),
  JwtPayloadParseErrorBadJson: status('JwtPayloadParseErrorBadJson', 11, 'Jwt payload is an invalid JSON'),
  JwtPayloadParseErrorIssNotString: status('JwtPayloadParseErrorIssNotString', 12, 'Jwt payload [iss] field is not a string'),
  JwtPayloadParseErrorSubNotString: status('JwtPayloadParseErrorSubNotString', 13, 'Jwt payload [sub] field is not a string'),
  JwtPayloadParseErrorIatNotInteger: status('JwtPayloadParseErrorIatNotInteger', 14, 'Jwt payload [iat] field is not an integer'),
  JwtPayloadParseErrorIatOutOfRange: status('JwtPayloadParseErrorIatOutOfRange', 15, 'Jwt payload [iat] field is not a positive 64 bit integer'),
  JwtPayloadParseErrorNbfNotInteger: status('JwtPayloadParseErrorNbfNotInteger', 16, 'Jwt payload [nbf] field is not an integer'),
  JwtPayloadParseErrorNbfOutOfRange: status('JwtPayloadParseErrorNbfOutOfRange', 17, 'Jwt payload [nbf] field is not a positive 64 bit integer'),
  JwtPayloadParseErrorExpNotInteger: status('JwtPayloadParseErrorExpNotInteger', 18, 'Jwt payload [exp] field is not an integer'),
  JwtPayloadParseErrorExpOutOfRange: status('JwtPayloadParseErrorExpOutOfRange', 19, 'Jwt payload [exp] field is not a positive 64 bit integer'),
  JwtPayloadParseErrorJtiNotString: status('JwtPayloadParseErrorJtiNotString', 20, 'Jwt payload [jti] field is not a string'),
  JwtPayloadParseErrorAudNotString: status('JwtPayloadParseErrorAudNotString', 21, 'Jwt payload [aud] field is not a string or string list'),
  JwtSignatureParseErrorBadBase64: status('JwtSignatureParseErrorBadBase64', 22, 'Jwt signature is an invalid Base64url encoded'),
  JwtEd25519SignatureWrongLength: status('JwtEd25519SignatureWrongLength', 23, 'Jwt ED25519 signature is wrong length'),
  JwtUnknownIssuer: status('JwtUnknownIssuer', 24, 'Jwt issuer is not configured'),
  JwtAudienceNotAllowed: status('JwtAudienceNotAllowed', 25, 'Audiences in Jwt are not allowed'),
  JwtVerificationFail: status('JwtVerificationFail', 26, 'Jwt verification fails'),
  JwksParseError: status('JwksParseError', 28, 'Jwks is an invalid JSON'),
  JwksNoKeys: status('JwksNoKeys', 29, 'Jwks does not have [keys] field'),
  JwksBadKeys: status('JwksBadKeys', 30, '[keys] in Jwks is not an array'),
  JwksNoValidKeys: status('JwksNoValidKeys', 31, "Jwks doesn't have any valid public key"),
  JwksKidAlgMismatch: status('JwksKidAlgMismatch', 32, "Jwks doesn't have key to match kid or alg from Jwt"),
  JwksFetchFail: status('JwksFetchFail', 40, 'Jwks remote fetch is failed'),
} as const;

export function isOk(s: JwtStatus): boolean {
  return s === Status.Ok;
}

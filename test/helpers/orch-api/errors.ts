/*
 * Errors answered as the API server's Status objects (kind Status, status Failure, reason, code,
 * details), with the reasons and message shapes the real server uses.
 */

export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

export const REASONS: Readonly<Record<number, string>> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  406: 'NotAcceptable',
  409: 'Conflict',
  410: 'Expired',
  413: 'RequestEntityTooLarge',
  415: 'UnsupportedMediaType',
  422: 'Invalid',
  429: 'TooManyRequests',
  500: 'InternalError',
  503: 'ServiceUnavailable',
  504: 'Timeout',
};

export class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly details?: StatusDetails,
  ) {
    super(message);
  }

  status(): Record<string, unknown> {
    const body: Record<string, unknown> = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: this.message, reason: this.reason };
    if (this.details) body.details = this.details;
    body.code = this.code;
    return body;
  }
}

/** What identifies a resource in messages: `pods`, `deployments.apps`, `widgets.example.com`. */
export function qualifiedResource(group: string, plural: string): string {
  return group ? `${plural}.${group}` : plural;
}

export function notFound(group: string, plural: string, name: string): ApiError {
  return new ApiError(404, 'NotFound', `${qualifiedResource(group, plural)} "${name}" not found`, { name, group: group || undefined, kind: plural });
}

export function pathNotFound(): ApiError {
  return new ApiError(404, 'NotFound', 'the server could not find the requested resource', {});
}

export function alreadyExists(group: string, plural: string, name: string): ApiError {
  return new ApiError(409, 'AlreadyExists', `${qualifiedResource(group, plural)} "${name}" already exists`, { name, group: group || undefined, kind: plural });
}

export function conflict(group: string, plural: string, name: string): ApiError {
  return new ApiError(
    409,
    'Conflict',
    `Operation cannot be fulfilled on ${qualifiedResource(group, plural)} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
    { name, group: group || undefined, kind: plural },
  );
}

export function badRequest(message: string): ApiError {
  return new ApiError(400, 'BadRequest', message);
}

export function methodNotAllowed(): ApiError {
  return new ApiError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource', {});
}

/** 422 with one cause per field problem: `Kind "name" is invalid: [field: problem, ...]`. */
export function invalid(group: string, kind: string, name: string, causes: StatusCause[]): ApiError {
  const listed = causes.map((c) => `${c.field}: ${c.message}`);
  const summary = listed.length === 1 ? listed[0] : `[${listed.join(', ')}]`;
  return new ApiError(422, 'Invalid', `${kind}${group ? '.' + group : ''} "${name}" is invalid: ${summary}`, { name, group: group || undefined, kind, causes });
}

export function gone(message: string): ApiError {
  return new ApiError(410, 'Expired', message);
}

export function tooOldResourceVersion(requested: string, oldest: number): ApiError {
  return gone(`too old resource version: ${requested} (${oldest})`);
}

export function internal(message: string): ApiError {
  return new ApiError(500, 'InternalError', `Internal error occurred: ${message}`, { causes: [{ message }] });
}

export function statusFor(code: number, message: string): ApiError {
  return new ApiError(code, REASONS[code] ?? 'Unknown', message);
}

/** An answer of the orchestrator API other than success: its HTTP status and the Status message. */
export class OrchApiError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
    /** The Status `reason` (`Expired`, `NotFound`, ...), when the server gave one. */
    readonly reason?: string,
  ) {
    super(message);
    this.name = 'OrchApiError';
  }
}

/**
 * The HTTP status behind an error from any part of the client: our own requests, the library's
 * typed APIs (ApiException.code) and its Watch (statusCode); undefined for network errors.
 */
export function statusCodeOf(err: unknown): number | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const e = err as { statusCode?: unknown; code?: unknown };
  if (typeof e.statusCode === 'number') return e.statusCode;
  if (typeof e.code === 'number') return e.code;
  return undefined;
}

/** The answer body as an API Status, when it is one: its message and reason. */
export function errorFromStatus(statusCode: number, body: string, what: string): OrchApiError {
  let message = body.trim().slice(0, 300) || `HTTP ${statusCode}`;
  let reason: string | undefined;
  try {
    const status = JSON.parse(body) as { kind?: string; message?: unknown; reason?: unknown };
    if (status && status.kind === 'Status') {
      if (typeof status.message === 'string' && status.message) message = status.message;
      if (typeof status.reason === 'string') reason = status.reason;
    }
  } catch {
    // Not JSON (a proxy's HTML page, say): the start of the text says enough.
  }
  return new OrchApiError(statusCode, `${what}: ${statusCode}${reason ? ` ${reason}` : ''}: ${message}`, reason);
}

/**
 * Any error of the library's clients as one line: `<status> <reason>: <message>` with the API's
 * Status message when it answered with one (typed APIs carry it in ApiException.body), else the
 * error's own first line.
 */
export function apiErrorMessage(err: unknown): string {
  if (err instanceof OrchApiError) return err.message;
  const status = statusCodeOf(err);
  const body = (err as { body?: unknown } | undefined)?.body;
  let parsed: { message?: unknown; reason?: unknown } | undefined;
  if (typeof body === 'string') {
    try {
      parsed = JSON.parse(body) as typeof parsed;
    } catch {
      parsed = undefined;
    }
  } else if (body && typeof body === 'object') parsed = body as typeof parsed;
  const own = ((err as Error | undefined)?.message ?? String(err)).split('\n')[0];
  const message = typeof parsed?.message === 'string' && parsed.message ? parsed.message : own;
  const reason = typeof parsed?.reason === 'string' && parsed.reason ? ` ${parsed.reason}` : '';
  return status ? `${status}${reason}: ${message}` : message;
}

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ScopedLogger } from '../logging';
import { AdmissionResponse, AdmissionReview, admissionReviewResponse, BadAdmissionRequest, readAdmissionReview } from './admission';

/** What an admission webhook decides for one well-formed review. */
export interface AdmissionDecider {
  admit(review: AdmissionReview, path: string): AdmissionResponse | Promise<AdmissionResponse>;
}

export interface AdmissionEndpointHooks {
  /** A request answered with an HTTP error instead of an AdmissionReview. */
  httpError?(status: number): void;
}

/**
 * Serves one admission request: reads and checks the AdmissionReview, asks `decider`, writes the
 * answering review. A malformed request gets its HTTP status and a message naming the fault;
 * a decider that throws gets a 500; nothing here throws.
 */
export async function serveAdmission(
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  decider: AdmissionDecider,
  log: ScopedLogger,
  hooks: AdmissionEndpointHooks = {},
): Promise<void> {
  let review: AdmissionReview;
  try {
    review = await readAdmissionReview(req);
  } catch (err) {
    const status = err instanceof BadAdmissionRequest ? err.status : 400;
    log.warn(`${path}: refused a request: ${(err as Error).message}`);
    hooks.httpError?.(status);
    answerError(res, status, (err as Error).message);
    return;
  }
  let body: string;
  try {
    body = JSON.stringify(admissionReviewResponse(review, await decider.admit(review, path)));
  } catch (err) {
    log.error(`${path}: admission request ${review.request.uid} failed: ${(err as Error).stack ?? (err as Error).message}`);
    hooks.httpError?.(500);
    answerError(res, 500, `could not answer the admission request: ${(err as Error).message}`);
    return;
  }
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
}

function answerError(res: ServerResponse, status: number, message: string): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' }).end(`${message}\n`);
}

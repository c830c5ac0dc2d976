/**
 * AdmissionReview, the body the orchestrator's API server sends to admission webhooks and
 * expects back (`admission.k8s.io/v1`, and `v1beta1` which older servers still send): reading
 * a request off the wire with every way it can be wrong named, and the answer in the
 * version it was asked in, with the request's uid.
 */
import type { IncomingMessage } from 'node:http';

export const ADMISSION_VERSIONS = ['admission.k8s.io/v1', 'admission.k8s.io/v1beta1'] as const;
export type AdmissionVersion = (typeof ADMISSION_VERSIONS)[number];

/** An AdmissionReview body larger than this is refused unread (the API server's own requests stay far below). */
export const MAX_ADMISSION_BODY_BYTES = 4 * 1024 * 1024;

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

export interface GroupVersionResource {
  group: string;
  version: string;
  resource: string;
}

export type AdmissionOperation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

/** The fields of `request` the webhooks read. */
export interface AdmissionRequest {
  uid: string;
  kind: GroupVersionKind;
  resource: GroupVersionResource;
  subResource?: string;
  name?: string;
  namespace?: string;
  operation: AdmissionOperation;
  /** The object as it would be stored (absent for DELETE). */
  object?: unknown;
  oldObject?: unknown;
  dryRun?: boolean;
}

export interface AdmissionReview {
  apiVersion: AdmissionVersion;
  request: AdmissionRequest;
}

export interface AdmissionResponse {
  allowed: boolean;
  /** Why a request is refused; the API server shows it to the user. */
  message?: string;
  /** An RFC 6902 JSON patch to apply to the object (mutating webhooks). */
  patch?: readonly JsonPatchOperation[];
  warnings?: string[];
}

export interface JsonPatchOperation {
  op: 'add' | 'remove' | 'replace' | 'move' | 'copy' | 'test';
  path: string;
  value?: unknown;
  from?: string;
}

/** A request the webhook cannot answer with an AdmissionReview: answered with this HTTP status and message. */
export class BadAdmissionRequest extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** Reads and decodes an AdmissionReview; throws BadAdmissionRequest naming what is wrong. */
export async function readAdmissionReview(req: IncomingMessage, maxBytes = MAX_ADMISSION_BODY_BYTES): Promise<AdmissionReview> {
  if (req.method !== 'POST') throw new BadAdmissionRequest(405, `method ${req.method ?? '?'} is not allowed: AdmissionReviews are POSTed`);
  const body = await readBody(req, maxBytes);
  if (body.length === 0) throw new BadAdmissionRequest(400, 'no body found');
  // As the incumbent: the API server always sends JSON; anything else is a 415.
  const mediaType = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  if (mediaType !== 'application/json') {
    throw new BadAdmissionRequest(415, `invalid Content-Type ${JSON.stringify(req.headers['content-type'] ?? '')}, want \`application/json\``);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch (err) {
    throw new BadAdmissionRequest(400, `could not decode body: not JSON (${(err as Error).message})`);
  }
  return decodeAdmissionReview(parsed);
}

/** Checks the shape of a decoded body; throws BadAdmissionRequest naming the field at fault. */
export function decodeAdmissionReview(body: unknown): AdmissionReview {
  const bad = (message: string) => new BadAdmissionRequest(400, `could not decode AdmissionReview: ${message}`);
  if (!isObject(body)) throw bad('the body must be a JSON object');
  if (body.kind !== 'AdmissionReview') throw bad(`kind is ${JSON.stringify(body.kind)}, want "AdmissionReview"`);
  if (!ADMISSION_VERSIONS.includes(body.apiVersion as AdmissionVersion)) {
    throw bad(`apiVersion ${JSON.stringify(body.apiVersion)} is not served (want ${ADMISSION_VERSIONS.join(' or ')})`);
  }
  const request = body.request;
  if (request === undefined || request === null) throw bad('request is missing');
  if (!isObject(request)) throw bad('request must be an object');
  if (typeof request.uid !== 'string' || request.uid === '') throw bad('request.uid is missing');
  if (typeof request.operation !== 'string' || !['CREATE', 'UPDATE', 'DELETE', 'CONNECT'].includes(request.operation)) {
    throw bad(`request.operation ${JSON.stringify(request.operation)} is not CREATE, UPDATE, DELETE or CONNECT`);
  }
  const kind = request.kind;
  if (!isObject(kind) || typeof kind.kind !== 'string' || typeof kind.version !== 'string') throw bad('request.kind must have group, version and kind');
  const resource = request.resource;
  if (!isObject(resource) || typeof resource.resource !== 'string' || typeof resource.version !== 'string') {
    throw bad('request.resource must have group, version and resource');
  }
  for (const field of ['name', 'namespace', 'subResource'] as const) {
    if (request[field] !== undefined && typeof request[field] !== 'string') throw bad(`request.${field} must be a string`);
  }
  return {
    apiVersion: body.apiVersion as AdmissionVersion,
    request: {
      uid: request.uid,
      kind: { group: stringOr(kind.group), version: kind.version, kind: kind.kind },
      resource: { group: stringOr(resource.group), version: resource.version, resource: resource.resource },
      ...(request.subResource ? { subResource: request.subResource as string } : {}),
      ...(request.name ? { name: request.name as string } : {}),
      ...(request.namespace ? { namespace: request.namespace as string } : {}),
      operation: request.operation as AdmissionOperation,
      ...(request.object !== undefined && request.object !== null ? { object: request.object } : {}),
      ...(request.oldObject !== undefined && request.oldObject !== null ? { oldObject: request.oldObject } : {}),
      ...(request.dryRun === true ? { dryRun: true } : {}),
    },
  };
}

/** The AdmissionReview answering `review`, in its version, carrying its uid. */
export function admissionReviewResponse(review: AdmissionReview, response: AdmissionResponse): Record<string, unknown> {
  const out: Record<string, unknown> = { uid: review.request.uid, allowed: response.allowed };
  // The API server prefixes a denial's message with 'admission webhook "<name>" denied the request: '.
  if (response.message !== undefined) out.status = { message: response.message };
  if (response.patch && response.patch.length > 0) {
    out.patchType = 'JSONPatch';
    out.patch = Buffer.from(JSON.stringify(response.patch)).toString('base64');
  }
  if (response.warnings && response.warnings.length > 0) out.warnings = response.warnings;
  return { apiVersion: review.apiVersion, kind: 'AdmissionReview', response: out };
}

function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) {
    req.resume();
    return Promise.reject(new BadAdmissionRequest(400, `request body of ${declared} bytes is over the limit of ${maxBytes} bytes`));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    req.on('data', (chunk: Buffer) => {
      if (done) return;
      size += chunk.length;
      if (size > maxBytes) {
        done = true;
        // Drain the rest unread, so the answer can still be written on this connection.
        req.resume();
        reject(new BadAdmissionRequest(400, `request body is over the limit of ${maxBytes} bytes`));
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (!done) resolve(Buffer.concat(chunks));
      done = true;
    });
    req.on('error', (err) => {
      if (!done) reject(new BadAdmissionRequest(400, `cannot read the request body: ${err.message}`));
      done = true;
    });
  });
}

function stringOr(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Whether `value` nests mappings and lists more than `max` levels deep (walked without recursion). */
export function nestedDeeperThan(value: unknown, max: number): boolean {
  const stack: Array<{ v: unknown; depth: number }> = [{ v: value, depth: 0 }];
  while (stack.length > 0) {
    const { v, depth } = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    if (depth >= max) return true;
    for (const child of Object.values(v)) stack.push({ v: child, depth: depth + 1 });
  }
  return false;
}

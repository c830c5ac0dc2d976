import * as https from 'node:https';
import { randomUUID } from 'node:crypto';

export interface AdmissionHttpResult {
  status: number;
  body: string;
  /** The parsed AdmissionReview when the body is one. */
  review?: { apiVersion: string; kind: string; response: AdmissionResponseBody };
}

export interface AdmissionResponseBody {
  uid: string;
  allowed: boolean;
  status?: { message?: string };
  patchType?: string;
  patch?: string;
  warnings?: string[];
}

/** The daemon's HTTPS certificate is for this name (DESIGN.md §1). */
export const DAEMON_SERVER_NAME = 'meshd.mesh-system.svc';

/**
 * POSTs `body` to the daemon's HTTPS address as the orchestrator's API server does: TLS checked
 * against `caPem` for the daemon's service name, `Content-Type: application/json` unless given.
 */
export function postAdmission(
  port: number,
  caPem: string,
  path: string,
  body: string | Buffer,
  headers: Record<string, string> = { 'content-type': 'application/json' },
  method = 'POST',
): Promise<AdmissionHttpResult> {
  // Keep-alive, as the API server's client: a server refusing a body early still reads (and drops) the rest instead of closing on the writer.
  const agent = new https.Agent({ keepAlive: true, maxSockets: 1 });
  return new Promise<AdmissionHttpResult>((resolve, reject) => {
    const req = https.request({ host: '127.0.0.1', port, path, method, ca: caPem, servername: DAEMON_SERVER_NAME, headers, agent }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (text += d));
      res.on('end', () => {
        let review: AdmissionHttpResult['review'];
        try {
          const parsed = JSON.parse(text) as AdmissionHttpResult['review'];
          if (parsed && parsed.kind === 'AdmissionReview') review = parsed;
        } catch {
          review = undefined;
        }
        resolve({ status: res.statusCode ?? 0, body: text, review });
      });
    });
    req.on('error', reject);
    req.setTimeout(10_000, () => req.destroy(new Error(`POST ${path} timed out`)));
    req.end(body);
  }).finally(() => agent.destroy());
}

/** An AdmissionReview request for `object`, as the API server writes it. */
export function admissionReview(
  object: Record<string, unknown>,
  options: { operation?: string; apiVersion?: string; resource?: { group: string; version: string; resource: string }; namespace?: string } = {},
): Record<string, unknown> {
  const [group, version] = String(object.apiVersion).includes('/') ? String(object.apiVersion).split('/') : ['', String(object.apiVersion)];
  const metadata = (object.metadata ?? {}) as { name?: string; namespace?: string };
  return {
    apiVersion: options.apiVersion ?? 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: randomUUID(),
      kind: { group, version, kind: object.kind },
      resource: options.resource ?? { group, version, resource: plural(String(object.kind)) },
      name: metadata.name,
      namespace: options.namespace ?? metadata.namespace,
      operation: options.operation ?? 'CREATE',
      userInfo: { username: 'admin' },
      object,
      dryRun: false,
    },
  };
}

/** The JSON patch of an answer, decoded. */
export function decodedPatch(response: AdmissionResponseBody): unknown[] {
  return response.patch ? (JSON.parse(Buffer.from(response.patch, 'base64').toString('utf8')) as unknown[]) : [];
}

/** The resource name the orchestrator gives a kind (AuthorizationPolicy -> authorizationpolicies). */
function plural(kind: string): string {
  const lower = kind.toLowerCase();
  return lower.endsWith('y') ? `${lower.slice(0, -1)}ies` : `${lower}s`;
}

import { randomUUID } from 'node:crypto';
import * as https from 'node:https';
import { isIP } from 'node:net';
import * as tls from 'node:tls';
import { ApiError, internal } from './errors';
import { isObject, jsonPatch } from './json-patch';
import type { ResourceType } from './resources';
import { labelSelectorMatches } from './selectors';
import type { Obj, Store } from './store';

/*
 * Admission webhooks as the real API server calls them: the MutatingWebhookConfigurations
 * and ValidatingWebhookConfigurations in the store select requests by their rules,
 * namespaceSelector and objectSelector; each selected webhook gets an admission.k8s.io/v1
 * AdmissionReview POSTed over HTTPS (verified against clientConfig.caBundle, within
 * timeoutSeconds, failurePolicy deciding what a failed call means). Mutating webhooks' JSON
 * patches are applied in order; a denial becomes `admission webhook "<name>" denied the
 * request: <message>`.
 *
 * There is no cluster network: a clientConfig.service is reached at the URL registered in
 * `serviceEndpoints` under `<namespace>/<name>` (e.g. 'mesh-system/meshd' ->
 * 'https://127.0.0.1:15017'), plus the service's path. The certificate must name the service's
 * DNS name (`<name>.<namespace>.svc`) or the IP connected to.
 */

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

export interface AdmissionAttributes {
  readonly operation: Operation;
  readonly type: ResourceType;
  readonly version: string;
  readonly subresource?: string;
  readonly namespace?: string;
  readonly name?: string;
  readonly object?: Obj;
  readonly oldObject?: Obj;
  readonly dryRun: boolean;
  readonly options?: Obj;
}

interface Rule {
  apiGroups?: string[];
  apiVersions?: string[];
  operations?: string[];
  resources?: string[];
  scope?: string;
}

interface Webhook {
  name: string;
  clientConfig?: { url?: string; caBundle?: string; service?: { namespace: string; name: string; path?: string; port?: number } };
  rules?: Rule[];
  failurePolicy?: 'Fail' | 'Ignore';
  namespaceSelector?: Obj;
  objectSelector?: Obj;
  timeoutSeconds?: number;
  admissionReviewVersions?: string[];
  sideEffects?: string;
  reinvocationPolicy?: string;
}

const MUTATING = 'admissionregistration.k8s.io/mutatingwebhookconfigurations';
const VALIDATING = 'admissionregistration.k8s.io/validatingwebhookconfigurations';

export interface WebhookCall {
  readonly webhook: string;
  readonly operation: Operation;
  readonly resource: string;
  readonly allowed?: boolean;
  readonly error?: string;
}

export class WebhookAdmission {
  /** `<namespace>/<name>` of a Service -> the base URL (scheme, host, port) its webhook listens on. */
  readonly serviceEndpoints = new Map<string, string>();
  /** Every webhook call made, in order (for tests). */
  readonly calls: WebhookCall[] = [];

  constructor(private readonly store: Store) {}

  /** Runs the mutating webhooks in order; returns the object as they left it. */
  async mutate(attrs: AdmissionAttributes, warnings: string[]): Promise<Obj | undefined> {
    let object = attrs.object;
    for (const webhook of this.selected(MUTATING, { ...attrs, object })) {
      const response = await this.call(webhook, { ...attrs, object }, warnings);
      if (!response) continue;
      if (response.patch !== undefined && object) {
        if (response.patchType !== 'JSONPatch') throw internal(`admission webhook "${webhook.name}" returned an unsupported patch type ${JSON.stringify(response.patchType)}`);
        let operations: unknown;
        try {
          operations = JSON.parse(Buffer.from(String(response.patch), 'base64').toString('utf8'));
        } catch {
          throw internal(`admission webhook "${webhook.name}" returned a patch that is not base64 JSON`);
        }
        try {
          object = jsonPatch(object, operations) as Obj;
        } catch (err) {
          throw internal(`admission webhook "${webhook.name}" returned a patch that does not apply: ${(err as Error).message}`);
        }
      }
    }
    return object;
  }

  /** Runs the validating webhooks (the real server runs them in parallel; any denial fails the request). */
  async validate(attrs: AdmissionAttributes, warnings: string[]): Promise<void> {
    const results = await Promise.allSettled(this.selected(VALIDATING, attrs).map((w) => this.call(w, attrs, warnings)));
    for (const r of results) if (r.status === 'rejected') throw r.reason;
  }

  private selected(configKey: string, attrs: AdmissionAttributes): Webhook[] {
    if (`${attrs.type.group}/${attrs.type.plural}` === MUTATING || `${attrs.type.group}/${attrs.type.plural}` === VALIDATING) return [];
    const out: Webhook[] = [];
    for (const config of this.store.items(configKey)) {
      for (const webhook of (config.webhooks ?? []) as Webhook[]) {
        if (this.matches(webhook, attrs)) out.push(webhook);
      }
    }
    return out;
  }

  private matches(w: Webhook, a: AdmissionAttributes): boolean {
    const ruleMatches = (w.rules ?? []).some((r) => {
      const any = (list: string[] | undefined, value: string) => (list ?? []).some((v) => v === '*' || v === value);
      if (!any(r.apiGroups, a.type.group) || !any(r.apiVersions, a.version) || !any(r.operations, a.operation)) return false;
      const scope = r.scope ?? '*';
      if (scope === 'Namespaced' && !a.type.namespaced) return false;
      if (scope === 'Cluster' && a.type.namespaced) return false;
      return (r.resources ?? []).some((pattern) => {
        if (pattern === '*/*') return true;
        const [res, sub] = pattern.split('/');
        const [wantRes, wantSub] = [a.type.plural, a.subresource];
        if (sub === undefined) return (res === '*' || res === wantRes) && wantSub === undefined;
        return (res === '*' || res === wantRes) && (sub === '*' || sub === wantSub);
      });
    });
    if (!ruleMatches) return false;
    if (w.namespaceSelector && Object.keys(w.namespaceSelector).length > 0) {
      let labels: Record<string, string> | undefined;
      if (a.type.group === '' && a.type.plural === 'namespaces') labels = (a.object ?? a.oldObject)?.metadata?.labels ?? {};
      else if (a.type.namespaced && a.namespace) labels = this.store.get('/namespaces', '', a.namespace)?.metadata?.labels ?? {};
      if (labels && !labelSelectorMatches(w.namespaceSelector, labels)) return false;
    }
    if (w.objectSelector && Object.keys(w.objectSelector).length > 0) {
      const matchesObject = (o: Obj | undefined) => o !== undefined && labelSelectorMatches(w.objectSelector, o.metadata?.labels ?? {});
      if (!matchesObject(a.object) && !matchesObject(a.oldObject)) return false;
    }
    return true;
  }

  /** One webhook call; the response (allowed), or undefined when an ignorable failure skipped it. Throws on denial or a failure that fails closed. */
  private async call(w: Webhook, a: AdmissionAttributes, warnings: string[]): Promise<Obj | undefined> {
    const failClosed = (w.failurePolicy ?? 'Fail') === 'Fail';
    const resource = `${a.type.group}/${a.type.plural}`;
    let target: { url: URL; serverName?: string };
    try {
      target = this.target(w);
    } catch (err) {
      this.calls.push({ webhook: w.name, operation: a.operation, resource, error: (err as Error).message });
      if (failClosed) throw internal(`failed calling webhook "${w.name}": ${(err as Error).message}`);
      return undefined;
    }
    const uid = randomUUID();
    const review = {
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      request: {
        uid,
        kind: { group: a.type.group, version: a.version, kind: a.type.kind },
        resource: { group: a.type.group, version: a.version, resource: a.type.plural },
        ...(a.subresource ? { subResource: a.subresource, requestSubResource: a.subresource } : {}),
        requestKind: { group: a.type.group, version: a.version, kind: a.type.kind },
        requestResource: { group: a.type.group, version: a.version, resource: a.type.plural },
        name: a.name ?? a.object?.metadata?.name ?? '',
        ...(a.namespace ? { namespace: a.namespace } : {}),
        operation: a.operation,
        userInfo: { username: 'system:admin', groups: ['system:masters', 'system:authenticated'] },
        object: a.object ?? null,
        oldObject: a.oldObject ?? null,
        dryRun: a.dryRun,
        options: a.options ?? null,
      },
    };
    const timeoutSeconds = w.timeoutSeconds ?? 10;
    let response: Obj;
    try {
      if (!(w.admissionReviewVersions ?? []).includes('v1')) throw new Error(`webhook does not accept v1 AdmissionReview (admissionReviewVersions ${JSON.stringify(w.admissionReviewVersions ?? [])})`);
      target.url.searchParams.set('timeout', `${timeoutSeconds}s`);
      const body = await post(target.url, JSON.stringify(review), w.clientConfig?.caBundle, target.serverName, timeoutSeconds * 1000);
      response = parseReview(body, uid);
    } catch (err) {
      const message = `failed to call webhook: Post "${target.url.href}": ${(err as Error).message}`;
      this.calls.push({ webhook: w.name, operation: a.operation, resource, error: message });
      if (failClosed) throw internal(`failed calling webhook "${w.name}": ${message}`);
      return undefined;
    }
    this.calls.push({ webhook: w.name, operation: a.operation, resource, allowed: response.allowed === true });
    for (const warning of Array.isArray(response.warnings) ? response.warnings : []) warnings.push(String(warning));
    if (response.allowed !== true) {
      const status = isObject(response.status) ? response.status : {};
      const code = typeof status.code === 'number' && status.code > 0 ? status.code : 400;
      const explanation = typeof status.message === 'string' && status.message !== '' ? status.message : 'without explanation';
      throw new ApiError(code, typeof status.reason === 'string' && status.reason ? status.reason : '', `admission webhook "${w.name}" denied the request: ${explanation}`);
    }
    return response;
  }

  private target(w: Webhook): { url: URL; serverName?: string } {
    const cc = w.clientConfig ?? {};
    if (cc.url) return { url: new URL(cc.url) };
    if (!cc.service) throw new Error('clientConfig has neither url nor service');
    const base = this.serviceEndpoints.get(`${cc.service.namespace}/${cc.service.name}`);
    if (!base) throw new Error(`service "${cc.service.namespace}/${cc.service.name}" has no endpoint registered (serviceEndpoints)`);
    const url = new URL(base);
    url.pathname = (url.pathname.replace(/\/$/, '') + (cc.service.path ?? '/')).replace(/^\/\//, '/');
    return { url, serverName: `${cc.service.name}.${cc.service.namespace}.svc` };
  }
}

function parseReview(text: string, uid: string): Obj {
  let review: unknown;
  try {
    review = JSON.parse(text);
  } catch {
    throw new Error('the webhook answered with something that is not JSON');
  }
  if (!isObject(review) || review.kind !== 'AdmissionReview' || review.apiVersion !== 'admission.k8s.io/v1') throw new Error('expected response of type admission.k8s.io/v1, Kind=AdmissionReview');
  const response = review.response;
  if (!isObject(response)) throw new Error('webhook response was absent');
  if (response.uid !== uid) throw new Error(`expected response.uid="${uid}", got "${String(response.uid)}"`);
  return response;
}

function post(url: URL, body: string, caBundle: string | undefined, serverName: string | undefined, timeoutMs: number): Promise<string> {
  if (url.protocol !== 'https:') return Promise.reject(new Error(`webhook scheme must be https, got ${url.protocol}`));
  const ca = caBundle ? Buffer.from(caBundle, 'base64').toString('utf8') : undefined;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return new Promise((resolve, reject) => {
    const req = https.request(
      url,
      {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json, */*', 'Content-Length': Buffer.byteLength(body) },
        ca,
        servername: serverName ?? (isIP(host) ? undefined : host),
        // The certificate may name the service's DNS name or the address connected to.
        checkServerIdentity: (_name, cert) => {
          const byName = serverName ? tls.checkServerIdentity(serverName, cert) : undefined;
          if (serverName && !byName) return undefined;
          return tls.checkServerIdentity(host, cert);
        },
        agent: false,
        timeout: timeoutMs,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
          if (text.length > 16 * 1024 * 1024) req.destroy(new Error('webhook response too large'));
        });
        res.on('end', () => {
          if ((res.statusCode ?? 0) >= 300) reject(new Error(`the server responded with the status code ${res.statusCode} but did not return more information`));
          else resolve(text);
        });
        res.on('error', reject);
      },
    );
    const timer = setTimeout(() => req.destroy(new Error(`context deadline exceeded (Client.Timeout exceeded while awaiting headers)`)), timeoutMs);
    req.on('close', () => clearTimeout(timer));
    req.on('timeout', () => req.destroy(new Error('context deadline exceeded')));
    req.on('error', reject);
    req.end(body);
  });
}

import * as http from 'node:http';
import * as https from 'node:https';
import type * as k8s from '@kubernetes/client-node';
import { orchLibrary } from './library';

/**
 * Acting as another identity toward the orchestrator API (kubectl's `--as`, `--as-group`,
 * `--as-uid`): the Impersonate-User, Impersonate-Group (one header line per group, which is how
 * the API server reads several) and Impersonate-Uid headers on every request.
 */
export interface Impersonation {
  user?: string;
  groups?: string[];
  uid?: string;
}

type FetchInit = Awaited<ReturnType<k8s.KubeConfig['applyToFetchOptions']>>;

/** Whether `impersonate` asks for anything at all. */
export function impersonates(impersonate: Impersonation | undefined): impersonate is Impersonation {
  return !!impersonate && (!!impersonate.user || !!impersonate.uid || (impersonate.groups?.length ?? 0) > 0);
}

/** The headers, a repeated one as an array (one line each, as node:http sends arrays). */
export function impersonationHeaders(impersonate: Impersonation): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  if (impersonate.user) headers['Impersonate-User'] = impersonate.user;
  if (impersonate.groups?.length) headers['Impersonate-Group'] = [...impersonate.groups];
  if (impersonate.uid) headers['Impersonate-Uid'] = impersonate.uid;
  return headers;
}

/**
 * A KubeConfig that adds the impersonation headers where the library builds its requests:
 * `applyToHTTPSOptions` (WebSockets: port-forward, exec), `applyToFetchOptions` (Watch) and
 * `applySecurityAuthentication` (typed APIs). The fetch paths cannot repeat a header line through
 * a `Headers` object, so Watch gets its headers as pairs, and the typed APIs of OrchClient go
 * through ImpersonatingHttpLibrary; a typed client made with `makeApiClient` directly carries a
 * single group only (use `OrchClient.api`).
 */
export function impersonatingKubeConfig(base: k8s.KubeConfig, impersonate: Impersonation): k8s.KubeConfig {
  return new (impersonatingKubeConfigClass())(base, impersonate);
}

type ImpersonatingKubeConfigClass = new (base: k8s.KubeConfig, impersonate: Impersonation) => k8s.KubeConfig;
let kubeConfigClass: ImpersonatingKubeConfigClass | undefined;

/** The subclass is made on first use: its base class is the library's, loaded on first use (./library). */
function impersonatingKubeConfigClass(): ImpersonatingKubeConfigClass {
  return (kubeConfigClass ??= class ImpersonatingKubeConfig extends orchLibrary().KubeConfig {
    constructor(
      base: k8s.KubeConfig,
      readonly impersonate: Impersonation,
    ) {
      super();
      this.loadFromOptions({ clusters: base.clusters, users: base.users, contexts: base.contexts, currentContext: base.getCurrentContext() });
    }

    override async applyToHTTPSOptions(opts: Parameters<k8s.KubeConfig['applyToHTTPSOptions']>[0]): Promise<void> {
      await super.applyToHTTPSOptions(opts);
      opts.headers = { ...(opts.headers ?? {}), ...impersonationHeaders(this.impersonate) };
    }

    override async applyToFetchOptions(opts: https.RequestOptions): Promise<FetchInit> {
      const init = await super.applyToFetchOptions(opts);
      // Pairs rather than a Headers object, which would join the groups into one line.
      const pairs: [string, string][] = [];
      new Headers(init.headers as ConstructorParameters<typeof Headers>[0]).forEach((value, name) => {
        if (!name.startsWith('impersonate-')) pairs.push([name, value]);
      });
      for (const [name, value] of Object.entries(impersonationHeaders(this.impersonate))) {
        for (const v of Array.isArray(value) ? value : [value]) pairs.push([name, v]);
      }
      return { ...init, headers: pairs };
    }

    override async applySecurityAuthentication(context: k8s.RequestContext): Promise<void> {
      await super.applySecurityAuthentication(context);
      for (const [name, value] of Object.entries(impersonationHeaders(this.impersonate))) {
        if (!Array.isArray(value)) context.setHeaderParam(name, value);
        else if (value.length === 1) context.setHeaderParam(name, value[0]);
      }
    }
  });
}

/**
 * The typed APIs' HTTP transport when impersonating: node:http(s) with the request's agent (its
 * CA and client certificate), sending each impersonated group as its own header line.
 */
export class ImpersonatingHttpLibrary implements k8s.PromiseHttpLibrary {
  constructor(private readonly impersonate: Impersonation) {}

  send(request: k8s.RequestContext): Promise<k8s.ResponseContext> {
    const url = new URL(request.getUrl());
    const headers: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(request.getHeaders())) if (!/^impersonate-/i.test(name)) headers[name] = value;
    Object.assign(headers, impersonationHeaders(this.impersonate));
    const body = request.getBody() as string | Buffer | undefined;
    if (body !== undefined && body !== null && !('Content-Length' in headers)) headers['Content-Length'] = String(Buffer.byteLength(body));
    const send = url.protocol === 'https:' ? https.request : http.request;
    return new Promise((resolve, reject) => {
      const req = send(url, { method: request.getHttpMethod().toString(), headers, agent: request.getAgent() as http.Agent | undefined, signal: request.getSignal() ?? undefined }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const all = Buffer.concat(chunks);
          const responseHeaders: Record<string, string> = {};
          for (const [name, value] of Object.entries(res.headers)) if (value !== undefined) responseHeaders[name] = Array.isArray(value) ? value.join(', ') : value;
          resolve(new (orchLibrary().ResponseContext)(res.statusCode ?? 0, responseHeaders, { text: async () => all.toString('utf8'), binary: async () => all }));
        });
      });
      req.on('error', reject);
      req.end(body ?? undefined);
    });
  }
}

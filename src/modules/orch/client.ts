import type * as k8s from '@kubernetes/client-node';
import { orchLibrary } from './library';
import { inject, injectable, optional } from 'inversify';
import { Logging, LoggingToken, ScopedLogger } from '../logging';
import { errorFromStatus, OrchApiError } from './api-error';
import { loadOrchConfig, OrchConfigError } from './config';
import { Informer, InformerObserver, InformerOptions, InformerTransport, ListPage } from './informer';
import { DefaultOrchConfigFile } from './default-config';
import { OrchMetrics } from './metrics';
import { Impersonation, impersonates, ImpersonatingHttpLibrary, impersonatingKubeConfig } from './impersonation';
import { describeResource, OrchObject, OrchResource } from './resources';
import { TokenBucket } from './rate-limiter';

/** Bound by the program that talks to the orchestrator (the daemon maps its flags). */
export const OrchClientOptionsToken = Symbol.for('mesh.OrchClientOptions');
export interface OrchClientOptions {
  /** The orchestrator config file (`--orchconfig`); empty = the in-cluster service account. */
  orchconfig: string;
  /** A context of that file other than its current one (`--context`, where the program has it). */
  context?: string;
  /** Requests per second toward the API (`--orchApiQPS`); zero or less = unlimited. */
  qps: number;
  /** Requests allowed at once before the rate applies (`--orchApiBurst`). */
  burst: number;
  /** Longest a list or other API call may take. Default 60 s. */
  requestTimeoutMs?: number;
  /** With `orchconfig` empty: look for the CLI's default file (ORCHCONFIG, ~/.kube/config) before the in-cluster account. */
  defaultConfigFile?: boolean;
  /** A config already loaded (a remote cluster's, from its Secret); `orchconfig` and `context` are then unused. */
  kubeConfig?: k8s.KubeConfig;
  /** Act as this identity (meshctl's `--as`, `--as-group`, `--as-uid`): the impersonation headers go on every request. */
  impersonate?: Impersonation;
}

/**
 * The program's one client of the orchestrator API (through @kubernetes/client-node): its
 * config, the library's typed API clients and informers, every request of them paced by one
 * token bucket (QPS and burst, as client-go does). The config is loaded on first use;
 * `kubeConfig` throws an OrchConfigError naming the file when it is unusable.
 */
@injectable()
export class OrchClient implements InformerTransport {
  private config: k8s.KubeConfig | undefined;
  private configuration: k8s.Configuration | undefined;
  private readonly bucket: TokenBucket;
  private readonly informers = new Set<Informer<OrchObject>>();
  private readonly log: ScopedLogger;
  private stopped = false;
  /** Requests sent (after the rate limit), for logs and tests. */
  sent = 0;

  constructor(
    @inject(OrchClientOptionsToken) private readonly options: OrchClientOptions,
    @inject(LoggingToken) logging: Logging,
    @inject(OrchMetrics) @optional() private readonly metrics?: OrchMetrics,
    @inject(DefaultOrchConfigFile) @optional() private readonly defaultFile?: DefaultOrchConfigFile,
  ) {
    this.log = logging.scope('orch');
    if (options.qps > 0 && !(options.burst >= 1)) throw new OrchConfigError(`--orchApiBurst must be at least 1 when --orchApiQPS is positive, got ${options.burst}`);
    if (!Number.isFinite(options.qps)) throw new OrchConfigError(`--orchApiQPS must be a number, got ${options.qps}`);
    const imp = options.impersonate;
    if (imp && !imp.user && (imp.uid || imp.groups?.length)) throw new OrchConfigError('impersonating groups or a UID needs a user to impersonate as well (--as)');
    this.bucket = new TokenBucket(options.qps, options.burst);
  }

  private configFile(): string | undefined {
    if (this.options.orchconfig) return this.options.orchconfig;
    return this.options.defaultConfigFile ? this.defaultFile?.path() : undefined;
  }

  /** The config file's, or else the in-cluster one; a CLI outside any cluster is told every place it looked. */
  private loadConfig(): k8s.KubeConfig {
    const file = this.configFile();
    try {
      return loadOrchConfig(file, this.options.context || undefined);
    } catch (err) {
      if (file || !this.options.defaultConfigFile || !(err instanceof OrchConfigError) || !/KUBERNETES_SERVICE_HOST/.test(err.message)) throw err;
      throw new OrchConfigError('no orchestrator config: no --orchconfig, no ORCHCONFIG, no ~/.kube/config, and not inside a cluster (KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set)');
    }
  }

  /** The loaded config. @throws OrchConfigError naming the file (or in-cluster source) when it is unusable. */
  get kubeConfig(): k8s.KubeConfig {
    if (!this.config) {
      const loaded = this.options.kubeConfig ?? this.loadConfig();
      this.config = impersonates(this.options.impersonate) ? impersonatingKubeConfig(loaded, this.options.impersonate) : loaded;
    }
    return this.config;
  }

  /** `https://host:port (context c)`, for logs. */
  describe(): string {
    const kc = this.kubeConfig;
    return `${kc.getCurrentCluster()?.server} (context ${kc.getCurrentContext()})`;
  }

  /** The library's typed client `Api` (CoreV1Api, CustomObjectsApi...), its requests paced by the client's rate limit. */
  api<T>(Api: new (configuration: k8s.Configuration) => T): T {
    return new Api(this.apiConfiguration());
  }

  /** An informer of `resource`; started by the caller, stopped with the client at the latest. */
  informer<T extends OrchObject>(resource: OrchResource, options: InformerOptions = {}): Informer<T> {
    if (this.stopped) throw new Error('orchestrator client stopped');
    const informer = new Informer<T>(resource, this, options, this.informerObserver());
    this.informers.add(informer as unknown as Informer<OrchObject>);
    return informer;
  }

  /** Stops every informer made here and fails requests still waiting for the rate limit. */
  stop(): void {
    this.stopped = true;
    for (const informer of this.informers) informer.stop();
    this.informers.clear();
    this.bucket.stop();
  }

  /** Waits for the rate limit before a request the library's typed clients do not make (a port-forward's upgrade). */
  async throttle(): Promise<void> {
    await this.bucket.take();
    this.sent++;
  }

  /** InformerTransport: one page of a collection, through the library's HTTP stack. */
  async list(path: string, query: Record<string, string>): Promise<ListPage> {
    return (await this.getJson(path, query)) as ListPage;
  }

  /** InformerTransport: a watch through the library's Watch, after waiting for the rate limit. */
  async watch(path: string, query: Record<string, string>, onEvent: (type: string, object: unknown) => void, onDone: (err: unknown) => void): Promise<AbortController> {
    const kc = this.kubeConfig;
    await this.bucket.take();
    this.sent++;
    return new (orchLibrary().Watch)(kc).watch(path, query, onEvent, onDone);
  }

  /** GET `path` as JSON; a non-2xx answer is an OrchApiError with the Status message. */
  async getJson(path: string, query: Record<string, string> = {}): Promise<unknown> {
    const configuration = this.apiConfiguration();
    let context = configuration.baseServer.makeRequestContext(path, orchLibrary().HttpMethod.GET);
    for (const [k, v] of Object.entries(query)) context.setQueryParam(k, v);
    context.setHeaderParam('Accept', 'application/json');
    await this.kubeConfig.applySecurityAuthentication(context);
    for (const middleware of configuration.middleware) context = await middleware.pre(context).toPromise();
    context.setSignal(AbortSignal.timeout(this.options.requestTimeoutMs ?? 60_000));
    const response = await configuration.httpApi.send(context).toPromise();
    const text = await response.body.text();
    if (response.httpStatusCode < 200 || response.httpStatusCode > 299) throw errorFromStatus(response.httpStatusCode, text, `GET ${path}`);
    try {
      return JSON.parse(text);
    } catch {
      throw new OrchApiError(response.httpStatusCode, `GET ${path}: the answer is not JSON`);
    }
  }

  private apiConfiguration(): k8s.Configuration {
    if (this.configuration) return this.configuration;
    const kc = this.kubeConfig;
    const server = kc.getCurrentCluster()!.server;
    const pace: k8s.Middleware = {
      pre: async (context) => {
        await this.bucket.take();
        this.sent++;
        return context;
      },
      post: async (response) => response,
    };
    const impersonate = this.options.impersonate;
    this.configuration = orchLibrary().createConfiguration({
      baseServer: new (orchLibrary().ServerConfiguration)(server, {}),
      authMethods: { default: kc },
      promiseMiddleware: [pace],
      // Only impersonation needs repeated header lines, which the library's fetch cannot send.
      ...(impersonates(impersonate) ? { httpApi: orchLibrary().wrapHttpLibrary(new ImpersonatingHttpLibrary(impersonate)) } : {}),
    });
    return this.configuration;
  }

  private informerObserver(): InformerObserver {
    return {
      syncError: (resource, err, retryInMs) => {
        this.metrics?.syncErrors.inc();
        this.log.warn(`${describeResource(resource)}: list/watch failed (${(err as Error)?.message ?? err}); retrying in ${retryInMs} ms`);
      },
      recovered: (resource) => this.log.info(`${describeResource(resource)}: list/watch works again`),
      missing: (resource) =>
        this.log.warn(`${describeResource(resource)} is not served by the orchestrator API (its CustomResourceDefinition is not installed?); treating it as empty and checking again periodically`),
    };
  }
}

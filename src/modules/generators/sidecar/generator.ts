import { inject, injectable, optional } from 'inversify';
import { mtlsOptionsKey, resolveMtlsOptions, TlsModeEndpointMetadata } from '../../security/mtls';
import { TypeUrl } from '../../envoy/type-urls';
import { GenerateRequest, XdsGenerator, XdsResource } from '../../model/generator';
import { PushContext } from '../../model/push-context';
import { sidecarClusters } from './clusters';
import { sidecarEndpoints } from './endpoints';
import { sidecarListeners } from './listeners';
import { SidecarContext, SidecarGeneratorOptions, SidecarGeneratorOptionsToken } from './options';
import { DEFAULT_PATH_NORMALIZATION, pathNormalizationFields } from './path-normalization';
import { sidecarRoutes } from './routes';

let instances = 0;

/**
 * The Envoy (sidecar) generator: CDS, EDS, LDS and RDS for proxies without a GENERATOR, and
 * for the built-in proxy that consumes the same resources (DESIGN.md §7).
 *
 * Built objects are shared through `push.memoize` as encoded bytes, keyed by what they depend
 * on: the proxy's scope (namespace and Sidecar resource, plus labels when a DestinationRule
 * workloadSelector or a VirtualService sourceLabels match exists) for outbound config, the
 * proxy's addresses, namespace and labels for inbound config. Contributors are expected to
 * give the same output for proxies with equal keys.
 */
@injectable()
export class SidecarGenerator implements XdsGenerator {
  // Generators with different contributors must not share memoized output.
  private readonly memoPrefix = `sidecar#${instances++}`;
  private readonly options: Partial<SidecarGeneratorOptions>;
  private context: { key: string; ctx: SidecarContext } | undefined;
  /** The context each push was generated with: worked out once per push, not once per proxy and type. */
  private readonly contexts = new WeakMap<PushContext, SidecarContext>();

  constructor(@inject(SidecarGeneratorOptionsToken) @optional() options: Partial<SidecarGeneratorOptions> = {}) {
    this.options = options;
    this.ctx(); // an unusable path normalization mode or trust domain fails here, at start
  }

  generate(request: GenerateRequest): XdsResource[] {
    const { push, proxy, names } = request;
    let ctx = this.contexts.get(push);
    if (!ctx) this.contexts.set(push, (ctx = this.ctx()));
    switch (request.typeUrl) {
      case TypeUrl.Cluster:
        return sidecarClusters(ctx, push, proxy, names, request.hosts);
      case TypeUrl.ClusterLoadAssignment:
        return sidecarEndpoints(ctx, push, proxy, names);
      case TypeUrl.Listener:
        return sidecarListeners(ctx, push, proxy, names);
      case TypeUrl.RouteConfiguration:
        return sidecarRoutes(ctx, push, proxy, names);
      default:
        return [];
    }
  }

  /**
   * The context from the options as they are now: the mesh config parts (path normalization,
   * trust domain, auto mTLS) follow the live mesh config, so it is rebuilt when they change
   * (read once per push: one push never mixes two versions).
   */
  private ctx(): SidecarContext {
    const options = this.options;
    const mtls = options.mtls ? resolveMtlsOptions(options.mtls) : undefined;
    const pathNormalization = options.pathNormalization ?? DEFAULT_PATH_NORMALIZATION;
    const key = `${pathNormalization}|${mtls ? mtlsOptionsKey(mtls) : 'plaintext'}`;
    if (this.context?.key === key) return this.context.ctx;
    const ctx: SidecarContext = {
      networkFilters: options.networkFilters ?? [],
      httpFilters: options.httpFilters ?? [],
      clusters: options.clusters ?? [],
      // Auto mTLS picks the transport socket by the endpoints' TLS mode.
      endpoints: [...(options.endpoints ?? []), ...(mtls ? [new TlsModeEndpointMetadata()] : [])],
      connectionManagers: options.connectionManagers ?? [],
      absoluteFqdnDomain: options.absoluteFqdnDomain ?? true,
      pathNormalizationFields: pathNormalizationFields(pathNormalization),
      mtls,
      memoPrefix: this.memoPrefix,
    };
    this.context = { key, ctx };
    return ctx;
  }
}

import { inject, injectable, optional } from 'inversify';
import { resolveMtlsOptions, TlsModeEndpointMetadata } from '../../security/mtls';
import { TypeUrl } from '../../envoy/type-urls';
import { GenerateRequest, XdsGenerator, XdsResource } from '../../model/generator';
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
  private readonly ctx: SidecarContext;

  constructor(@inject(SidecarGeneratorOptionsToken) @optional() options: Partial<SidecarGeneratorOptions> = {}) {
    const mtls = options.mtls ? resolveMtlsOptions(options.mtls) : undefined;
    this.ctx = {
      networkFilters: options.networkFilters ?? [],
      httpFilters: options.httpFilters ?? [],
      clusters: options.clusters ?? [],
      // Auto mTLS picks the transport socket by the endpoints' TLS mode.
      endpoints: [...(options.endpoints ?? []), ...(mtls ? [new TlsModeEndpointMetadata()] : [])],
      connectionManagers: options.connectionManagers ?? [],
      absoluteFqdnDomain: options.absoluteFqdnDomain ?? true,
      pathNormalizationFields: pathNormalizationFields(options.pathNormalization ?? DEFAULT_PATH_NORMALIZATION),
      mtls,
      // Generators with different contributors must not share memoized output.
      memoPrefix: `sidecar#${instances++}`,
    };
  }

  generate(request: GenerateRequest): XdsResource[] {
    const { push, proxy, names } = request;
    switch (request.typeUrl) {
      case TypeUrl.Cluster:
        return sidecarClusters(this.ctx, push, proxy, names);
      case TypeUrl.ClusterLoadAssignment:
        return sidecarEndpoints(this.ctx, push, proxy, names);
      case TypeUrl.Listener:
        return sidecarListeners(this.ctx, push, proxy, names);
      case TypeUrl.RouteConfiguration:
        return sidecarRoutes(this.ctx, push, proxy, names);
      default:
        return [];
    }
  }
}

/**
 * What the generators are built with, mapped once from the enabled plugins' contributions (in
 * phase order), the settings and the mesh config: the generators module binds these to the
 * generators' option tokens. Contributions are resolved here, never per proxy or per push.
 */
import { inject, injectable, named } from 'inversify';
import { MeshConfig } from '../mesh-config';
import {
  ClusterContributor, EndpointContributor, HttpConnectionManagerContributor, HttpFilterContributor, NetworkFilterContributor,
} from '../model/generator';
import { ContributionProvider } from '../plugins/contribution-provider';
import { MtlsOptions, MtlsOptionsToken } from '../security/mtls';
import { Settings, SettingsToken } from '../settings';
import { GrpcGeneratorOptions } from './grpc/generator';
import { PathNormalizationMode, SidecarGeneratorOptions } from './sidecar';

/** Envoy sidecars and the built-in proxy: every contribution point, PILOT_ENABLE_ABSOLUTE_FQDN_VHOST_DOMAIN, the live mesh config's pathNormalization, and mTLS. */
@injectable()
export class SidecarOptionsFromMesh implements SidecarGeneratorOptions {
  readonly networkFilters: readonly NetworkFilterContributor[];
  readonly httpFilters: readonly HttpFilterContributor[];
  readonly clusters: readonly ClusterContributor[];
  readonly endpoints: readonly EndpointContributor[];
  readonly connectionManagers: readonly HttpConnectionManagerContributor[];
  readonly absoluteFqdnDomain: boolean;
  readonly mtls: MtlsOptions;

  constructor(
    @inject(ContributionProvider) @named(NetworkFilterContributor) networkFilters: ContributionProvider<NetworkFilterContributor>,
    @inject(ContributionProvider) @named(HttpFilterContributor) httpFilters: ContributionProvider<HttpFilterContributor>,
    @inject(ContributionProvider) @named(ClusterContributor) clusters: ContributionProvider<ClusterContributor>,
    @inject(ContributionProvider) @named(EndpointContributor) endpoints: ContributionProvider<EndpointContributor>,
    @inject(ContributionProvider) @named(HttpConnectionManagerContributor) connectionManagers: ContributionProvider<HttpConnectionManagerContributor>,
    @inject(SettingsToken) settings: Settings,
    @inject(MeshConfig) private readonly mesh: MeshConfig,
    @inject(MtlsOptionsToken) mtls: MtlsOptions,
  ) {
    this.networkFilters = networkFilters.getContributions();
    this.httpFilters = httpFilters.getContributions();
    this.clusters = clusters.getContributions();
    this.endpoints = endpoints.getContributions();
    this.connectionManagers = connectionManagers.getContributions();
    this.absoluteFqdnDomain = settings.bool('PILOT_ENABLE_ABSOLUTE_FQDN_VHOST_DOMAIN');
    this.mtls = mtls;
  }

  /** Read live: a mesh config change reaches the next push. */
  get pathNormalization(): PathNormalizationMode {
    return this.mesh.current().pathNormalization;
  }
}

/** Proxyless gRPC: endpoint contributions, the HTTP filters its server listeners may keep (RBAC), mTLS. */
@injectable()
export class GrpcOptionsFromMesh implements GrpcGeneratorOptions {
  readonly endpoints: readonly EndpointContributor[];
  readonly serverHttpFilters: readonly HttpFilterContributor[];
  readonly mtls: MtlsOptions;

  constructor(
    @inject(ContributionProvider) @named(EndpointContributor) endpoints: ContributionProvider<EndpointContributor>,
    @inject(ContributionProvider) @named(HttpFilterContributor) httpFilters: ContributionProvider<HttpFilterContributor>,
    @inject(MtlsOptionsToken) mtls: MtlsOptions,
  ) {
    this.endpoints = endpoints.getContributions();
    this.serverHttpFilters = httpFilters.getContributions();
    this.mtls = mtls;
  }
}

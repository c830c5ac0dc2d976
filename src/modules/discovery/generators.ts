import type { Container } from 'inversify';
import {
  ClusterContributor,
  EndpointContributor,
  HttpConnectionManagerContributor,
  HttpFilterContributor,
  NamedGenerator,
  NetworkFilterContributor,
  XdsGenerator,
  XdsGeneratorToken,
} from '../model/generator';
import { GrpcGenerator } from '../generators/grpc/generator';
import { NameTableGenerator, withNameTable } from '../generators/nds';
import { DEFAULT_PATH_NORMALIZATION, SidecarGenerator } from '../generators/sidecar';
import { MtlsOptions } from '../security/mtls';
import { Settings } from '../settings';

/** Everything bound to a contribution point (none when no plugin provides it). */
export function contributions<T>(container: Container, token: symbol): T[] {
  return container.isBound(token) ? container.getAll<T>(token) : [];
}

/** Contributions of the daemon's own (non-plugin) parts that need daemon state. */
export interface CoreContributions {
  /**
   * HTTP filters placed before every plugin's, in this order: jwt_authn first, since the RBAC
   * filters after it read the payload it verifies.
   */
  leadingHttpFilters?: readonly HttpFilterContributor[];
  /**
   * Network filters placed after every plugin's, right before the terminal filter: the
   * network RBAC filters, which see the connection once telemetry filters have.
   */
  trailingNetworkFilters?: readonly NetworkFilterContributor[];
}

/** Mesh mutual TLS in generated config, from the mesh config (the settings part is read here). */
export interface MeshTlsSettings {
  /** The mesh's trust domain; `cluster.local` when not given. */
  trustDomain?: string;
  /** Mesh config `enableAutoMtls`; default true. */
  enableAutoMtls?: boolean;
  /**
   * Envoy and built-in proxy config carries mesh mTLS (inbound TLS chains, outbound TLS
   * clusters). Default false until the built-in proxy terminates TLS: it rejects listeners with
   * TLS chains. Proxyless gRPC config always carries it.
   */
  sidecars?: boolean;
}

/**
 * The generators by node metadata GENERATOR (`''` = Envoy sidecars and the built-in proxy,
 * `grpc` = proxyless gRPC), with the daemon's own and the enabled plugins' contributions and
 * generators; each also serves the name table (NDS).
 */
export function generatorsFrom(container: Container, settings: Settings, core: CoreContributions = {}, tls: MeshTlsSettings = {}): Map<string, XdsGenerator> {
  const endpoints = contributions<EndpointContributor>(container, EndpointContributor);
  const httpFilters = [...(core.leadingHttpFilters ?? []), ...contributions<HttpFilterContributor>(container, HttpFilterContributor)];
  const mtls: MtlsOptions = {
    trustDomain: tls.trustDomain,
    enableAutoMtls: tls.enableAutoMtls,
    peerExchangeAlpn: settings.bool('PILOT_ENABLE_METADATA_EXCHANGE') && !settings.bool('PILOT_DISABLE_MX_ALPN'),
  };
  const generators = new Map<string, XdsGenerator>([
    [
      '',
      new SidecarGenerator({
        networkFilters: [...contributions<NetworkFilterContributor>(container, NetworkFilterContributor), ...(core.trailingNetworkFilters ?? [])],
        httpFilters,
        clusters: contributions<ClusterContributor>(container, ClusterContributor),
        endpoints,
        connectionManagers: contributions<HttpConnectionManagerContributor>(container, HttpConnectionManagerContributor),
        absoluteFqdnDomain: settings.bool('PILOT_ENABLE_ABSOLUTE_FQDN_VHOST_DOMAIN'),
        // Mesh config pathNormalization.normalization; the daemon reads no mesh config yet.
        pathNormalization: DEFAULT_PATH_NORMALIZATION,
        mtls: tls.sidecars ? mtls : undefined,
      }),
    ],
    ['grpc', new GrpcGenerator({ endpoints, serverHttpFilters: httpFilters, mtls })],
  ]);
  // Plugins may serve further GENERATOR values, or replace ours.
  for (const named of contributions<NamedGenerator>(container, XdsGeneratorToken)) generators.set(named.generatorName, named.generator);
  // The agent's DNS proxy asks for the name table whichever proxy it runs.
  const nameTables = new NameTableGenerator();
  for (const [name, generator] of generators) generators.set(name, withNameTable(generator, nameTables));
  return generators;
}

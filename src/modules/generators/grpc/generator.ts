import { inject, injectable, optional } from 'inversify';
import { Proxy } from '../../model/proxy';
import { PushContext } from '../../model/push-context';
import { Service, ServicePort } from '../../registry/model';
import { MtlsOptions, ResolvedMtlsOptions, resolveMtlsOptions } from '../../security/mtls';
import { encodeResource } from '../../model/body-interning';
import { TypeUrl } from '../../envoy/type-urls';
import { EndpointContributor, GenerateRequest, HttpFilterContributor, XdsGenerator, XdsResource } from '../../model/generator';
import { buildLoadAssignment, buildOutboundClusters, buildVirtualHost } from '../common';
import { outboundClusterName, parseClusterName } from '../../model/naming';
import { buildServerListener, GRPC_SERVER_LISTENER_PREFIX } from './server-listener';
import { FAULT_FILTER, FAULT_TYPE, HCM_TYPE, ROUTER_FILTER, ROUTER_TYPE } from '../../envoy/well-known';


/** Bound by the generators module. */
export const GrpcGeneratorOptionsToken = Symbol.for('mesh.GrpcGeneratorOptions');
export interface GrpcGeneratorOptions {
  /** Applied to every endpoint of EDS. */
  endpoints?: readonly EndpointContributor[];
  /**
   * HTTP filters offered to the connection managers of server listeners (inbound); only the RBAC
   * filters a gRPC server can enforce are kept.
   */
  serverHttpFilters?: readonly HttpFilterContributor[];
  /**
   * Mesh mutual TLS: PeerAuthentication on server listeners, DestinationRule TLS and auto mTLS on
   * client clusters, with certificates from the bootstrap's certificate provider `default`.
   * Absent: no TLS.
   */
  mtls?: MtlsOptions;
}

let instances = 0;

/**
 * Config for proxyless gRPC (node metadata GENERATOR=grpc), as the gRPC xDS design (gRFC A27
 * and its successors) expects. A client asks by name for the listener of its target
 * `xds:///<host>:<port>`; that listener is an API listener whose connection manager points at a
 * route table named after the default cluster; routes name clusters
 * `outbound|<port>|<subset>|<host>`, which are EDS clusters. An xDS-enabled server asks for
 * `xds.mesh.io/grpc/lds/inbound/<ip>:<port>` (gRFC A36; see `server-listener.ts`).
 */
@injectable()
export class GrpcGenerator implements XdsGenerator {
  private readonly endpointContributors: readonly EndpointContributor[];
  private readonly serverHttpFilters: readonly HttpFilterContributor[];
  private readonly mtlsOptions: MtlsOptions | undefined;
  /** Generators with different options must not share memoized output. */
  private readonly memoPrefix = `grpc#${instances++}`;

  constructor(@inject(GrpcGeneratorOptionsToken) @optional() options: GrpcGeneratorOptions = {}) {
    this.endpointContributors = options.endpoints ?? [];
    this.serverHttpFilters = options.serverHttpFilters ?? [];
    this.mtlsOptions = options.mtls;
    void this.mtls; // an unusable trust domain fails here, at start
  }

  /** Resolved when read: the trust domain and auto mTLS follow the live mesh config. */
  private get mtls(): ResolvedMtlsOptions | undefined {
    return this.mtlsOptions ? resolveMtlsOptions(this.mtlsOptions) : undefined;
  }

  generate(request: GenerateRequest): XdsResource[] {
    const { push, proxy, typeUrl } = request;
    const names = request.names ?? [];
    switch (typeUrl) {
      case TypeUrl.Listener:
        return this.each(names, (name) => (name.startsWith(GRPC_SERVER_LISTENER_PREFIX) ? this.serverListener(push, proxy, name) : this.listener(push, name)));
      case TypeUrl.RouteConfiguration:
        return this.each(names, (name) => this.routeConfiguration(push, proxy, name));
      case TypeUrl.Cluster:
        return this.each(names, (name) => this.cluster(push, proxy, name));
      case TypeUrl.ClusterLoadAssignment:
        return this.each(names, (name) => this.loadAssignment(push, proxy, name));
      default:
        return []; // the name table comes from the NDS generator
    }
  }

  private each(names: readonly string[], build: (name: string) => Buffer | undefined): XdsResource[] {
    const out: XdsResource[] = [];
    for (const name of names) {
      const body = build(name);
      if (body) out.push({ name, body });
    }
    return out;
  }

  /** `<host>:<port>`, or `<host>` for a service with a single port. */
  private target(push: PushContext, name: string): { service: Service; port: ServicePort } | undefined {
    const colon = name.lastIndexOf(':');
    const host = colon > 0 ? name.slice(0, colon) : name;
    const service = push.service(host);
    if (!service) return undefined;
    const port = colon > 0 ? service.ports.find((p) => String(p.number) === name.slice(colon + 1)) : service.ports.length === 1 ? service.ports[0] : undefined;
    return port ? { service, port } : undefined;
  }

  private serverListener(push: PushContext, proxy: Proxy, name: string): Buffer | undefined {
    // Built from the proxy's own endpoints, namespace and labels (policies select by them).
    const labels = JSON.stringify(Object.keys(proxy.labels).sort().map((k) => [k, proxy.labels[k]]));
    return push.memoize(`${this.memoPrefix}/lds-in/${proxy.ips.join(',')}|${proxy.namespace}|${labels}/${name}`, () => {
      const listener = buildServerListener(push, proxy, name, this.serverHttpFilters, this.mtls !== undefined);
      return listener ? encodeResource(TypeUrl.Listener, name, listener) : undefined;
    });
  }

  private listener(push: PushContext, name: string): Buffer | undefined {
    return push.memoize(`${this.memoPrefix}/lds/${name}`, () => {
      const target = this.target(push, name);
      if (!target) return undefined;
      const routeName = outboundClusterName(target.port.number, '', target.service.hostname);
      return encodeResource(TypeUrl.Listener, name, {
        name,
        api_listener: {
          api_listener: {
            '@type': HCM_TYPE,
            stat_prefix: name,
            rds: { config_source: { ads: {}, resource_api_version: 'V3' }, route_config_name: routeName },
            // gRPC applies the fault filter's per-route config (VirtualService fault injection).
            http_filters: [
              { name: FAULT_FILTER, typed_config: { '@type': FAULT_TYPE } },
              { name: ROUTER_FILTER, typed_config: { '@type': ROUTER_TYPE } },
            ],
          },
        },
      });
    });
  }

  private routeConfiguration(push: PushContext, proxy: Proxy, name: string): Buffer | undefined {
    const parsed = parseClusterName(name);
    if (!parsed || parsed.direction !== 'outbound') return undefined;
    return push.cached('rds', `${this.memoPrefix}/${proxy.namespace}/${name}`, [`host:${parsed.host}`, 'services', 'kind:VirtualService', 'kind:DestinationRule'], () => {
      const service = push.service(parsed.host);
      const port = service?.ports.find((p) => p.number === parsed.port);
      if (!service || !port) return undefined;
      return encodeResource(TypeUrl.RouteConfiguration, name, {
        name,
        virtual_hosts: [buildVirtualHost(push, proxy, service, port, { forGrpc: true })],
      });
    });
  }

  private cluster(push: PushContext, proxy: Proxy, name: string): Buffer | undefined {
    const parsed = parseClusterName(name);
    if (!parsed || parsed.direction !== 'outbound') return undefined;
    const key = `${this.memoPrefix}/${proxy.namespace}/${JSON.stringify(proxy.labels)}/${parsed.host}/${parsed.port}`;
    // With mTLS a cluster also reads PeerAuthentications (auto mTLS); its endpoints (TLS modes,
    // service accounts) are the host's, which `host:` covers.
    const dependencies = [`host:${parsed.host}`, ...(this.mtls ? ['kind:PeerAuthentication'] : [])];
    const all = push.cached('cds', key, dependencies, () => {
      const service = push.service(parsed.host);
      const port = service?.ports.find((p) => p.number === parsed.port);
      if (!service || !port) return new Map<string, Buffer>();
      const mtls = this.mtls && { options: this.mtls, source: 'certificate-provider' as const };
      const clusters = buildOutboundClusters(push, proxy, service, port, { forGrpc: true, mtls });
      return new Map(clusters.map((c) => [c.name as string, encodeResource(TypeUrl.Cluster, c.name as string, c)]));
    });
    return all.get(name);
  }

  private loadAssignment(push: PushContext, proxy: Proxy, name: string): Buffer | undefined {
    const host = parseClusterName(name)?.host ?? '';
    return push.cached('eds', `${this.memoPrefix}/${proxy.namespace}/${JSON.stringify(proxy.labels)}/${name}`, [`host:${host}`], () => {
      const cla = buildLoadAssignment(push, proxy, name, this.endpointContributors);
      return cla ? encodeResource(TypeUrl.ClusterLoadAssignment, name, cla) : undefined;
    });
  }
}

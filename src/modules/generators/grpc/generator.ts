import { Proxy } from '../../model/proxy';
import { PushContext } from '../../model/push-context';
import { Service, ServicePort } from '../../registry/model';
import { encodeMessage } from '../../xds/protos';
import { TypeUrl, typeUrlOf } from '../../xds/type-urls';
import { EndpointContributor, GenerateRequest, XdsGenerator, XdsResource } from '../api';
import { buildLoadAssignment, buildOutboundClusters, buildVirtualHost } from '../common';
import { outboundClusterName, parseClusterName } from '../naming';

const HCM = 'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager';
const ROUTER = typeUrlOf('envoy.extensions.filters.http.router.v3.Router');
const FAULT = typeUrlOf('envoy.extensions.filters.http.fault.v3.HTTPFault');

/**
 * Config for proxyless gRPC clients (node metadata GENERATOR=grpc), as the gRPC xDS design
 * (gRFC A27 and its successors) expects: the client asks by name for the listener of its
 * target `xds:///<host>:<port>`; that listener is an API listener whose connection manager
 * points at a route table named after the default cluster; routes name clusters
 * `outbound|<port>|<subset>|<host>`, which are EDS clusters.
 */
export class GrpcGenerator implements XdsGenerator {
  constructor(private readonly endpointContributors: readonly EndpointContributor[] = []) {}

  generate(request: GenerateRequest): XdsResource[] {
    const { push, proxy, typeUrl } = request;
    const names = request.names ?? [];
    switch (typeUrl) {
      case TypeUrl.Listener:
        return this.each(names, (name) => this.listener(push, name));
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

  private listener(push: PushContext, name: string): Buffer | undefined {
    return push.memoize(`grpc/lds/${name}`, () => {
      const target = this.target(push, name);
      if (!target) return undefined;
      const routeName = outboundClusterName(target.port.number, '', target.service.hostname);
      return encodeMessage(TypeUrl.Listener, {
        name,
        api_listener: {
          api_listener: {
            '@type': HCM,
            stat_prefix: name,
            rds: { config_source: { ads: {}, resource_api_version: 'V3' }, route_config_name: routeName },
            // gRPC applies the fault filter's per-route config (VirtualService fault injection).
            http_filters: [
              { name: 'envoy.filters.http.fault', typed_config: { '@type': FAULT } },
              { name: 'envoy.filters.http.router', typed_config: { '@type': ROUTER } },
            ],
          },
        },
      });
    });
  }

  private routeConfiguration(push: PushContext, proxy: Proxy, name: string): Buffer | undefined {
    const parsed = parseClusterName(name);
    if (!parsed || parsed.direction !== 'outbound') return undefined;
    return push.cached('rds', `grpc/${proxy.namespace}/${name}`, [`host:${parsed.host}`, 'services', 'kind:VirtualService', 'kind:DestinationRule'], () => {
      const service = push.service(parsed.host);
      const port = service?.ports.find((p) => p.number === parsed.port);
      if (!service || !port) return undefined;
      return encodeMessage(TypeUrl.RouteConfiguration, {
        name,
        virtual_hosts: [buildVirtualHost(push, proxy, service, port, { forGrpc: true })],
      });
    });
  }

  private cluster(push: PushContext, proxy: Proxy, name: string): Buffer | undefined {
    const parsed = parseClusterName(name);
    if (!parsed || parsed.direction !== 'outbound') return undefined;
    const key = `grpc/${proxy.namespace}/${JSON.stringify(proxy.labels)}/${parsed.host}/${parsed.port}`;
    const all = push.cached('cds', key, [`host:${parsed.host}`], () => {
      const service = push.service(parsed.host);
      const port = service?.ports.find((p) => p.number === parsed.port);
      if (!service || !port) return new Map<string, Buffer>();
      const clusters = buildOutboundClusters(push, proxy, service, port, { forGrpc: true });
      return new Map(clusters.map((c) => [c.name as string, encodeMessage(TypeUrl.Cluster, c)]));
    });
    return all.get(name);
  }

  private loadAssignment(push: PushContext, proxy: Proxy, name: string): Buffer | undefined {
    const host = parseClusterName(name)?.host ?? '';
    return push.cached('eds', `grpc/${proxy.namespace}/${JSON.stringify(proxy.labels)}/${name}`, [`host:${host}`], () => {
      const cla = buildLoadAssignment(push, proxy, name, this.endpointContributors);
      return cla ? encodeMessage(TypeUrl.ClusterLoadAssignment, cla) : undefined;
    });
  }
}

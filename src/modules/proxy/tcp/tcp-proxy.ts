/** Envoy's tcp_proxy: each downstream connection piped to an endpoint of the chosen cluster. */
import * as net from 'node:net';
import * as tls from 'node:tls';
import { ClusterManager } from '../upstream/cluster-manager';
import type { Decoded } from '../xds/xds-client';

export class TcpProxy {
  private readonly target: string | { name: string; weight: number }[];

  constructor(
    config: Decoded,
    private readonly clusters: ClusterManager,
  ) {
    if (config.cluster) this.target = String(config.cluster);
    else if (config.weighted_clusters?.clusters?.length) {
      this.target = (config.weighted_clusters.clusters as Decoded[]).map((c) => ({ name: String(c.name), weight: Number(c.weight ?? 0) }));
    } else throw new Error('tcp_proxy names no cluster');
  }

  accept(socket: net.Socket): void {
    const clusterName = this.clusterName();
    const endpoint = clusterName ? this.clusters.pick(clusterName) : undefined;
    if (!endpoint) {
      socket.destroy();
      return;
    }
    const timeout = this.clusters.cluster(clusterName!)?.connectTimeoutMs ?? 10_000;
    const transport = this.clusters.transportFor(clusterName!, endpoint);
    const tlsOptions = transport?.connectOptions();
    if (transport && !tlsOptions) {
      socket.destroy();
      return;
    }
    const upstream = tlsOptions ? tls.connect({ host: endpoint.address, port: endpoint.port, ...tlsOptions }) : net.connect({ host: endpoint.address, port: endpoint.port });
    upstream.setTimeout(timeout, () => upstream.destroy(new Error('connect timeout')));
    upstream.once(tlsOptions ? 'secureConnect' : 'connect', () => upstream.setTimeout(0));
    socket.pipe(upstream).pipe(socket);
    const end = () => {
      socket.destroy();
      upstream.destroy();
    };
    upstream.on('error', end);
    socket.on('error', end);
    upstream.on('close', () => socket.destroy());
    socket.on('close', () => upstream.destroy());
  }

  private clusterName(): string | undefined {
    if (typeof this.target === 'string') return this.target;
    const total = this.target.reduce((n, c) => n + c.weight, 0);
    let r = Math.random() * total;
    for (const c of this.target) if ((r -= c.weight) < 0) return c.name;
    return this.target[this.target.length - 1]?.name;
  }
}

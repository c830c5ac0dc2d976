/**
 * `pilot-agent proxy`: decides which proxy to run (Envoy when its binary is at ProxyConfig
 * `binaryPath`, else the built-in proxy), and serves the status port for it.
 */
import * as fs from 'node:fs';
import { ScopedLogger } from '../logging';
import { BuiltInProxy } from '../proxy/builtin-proxy';
import { BUILTIN_HTTP_FILTERS, BUILTIN_NETWORK_FILTERS } from '../proxy/builtin-filters';
import type { AdsNode } from '../proxy/xds/ads-client';
import { BuiltInAdminServer } from './builtin-admin';
import { ProxyConfig } from './proxy-config';
import { StatusServer } from './status-server';

export class AgentStartError extends Error {}

export interface AgentOptions {
  proxyConfig: ProxyConfig;
  node: AdsNode;
  statusPort: number;
  log: ScopedLogger;
}

export class Agent {
  private proxy?: BuiltInProxy;
  private admin?: BuiltInAdminServer;
  private status?: StatusServer;

  constructor(private readonly options: AgentOptions) {}

  async start(): Promise<void> {
    const { proxyConfig, log } = this.options;
    if (fs.existsSync(proxyConfig.binaryPath)) {
      // Running Envoy needs its bootstrap and, with MUTUAL_TLS, SDS certificates: not built yet.
      throw new AgentStartError(
        `an Envoy binary is at binaryPath ${proxyConfig.binaryPath}, but this agent cannot bootstrap Envoy yet; ` +
          'set ProxyConfig binaryPath to a path without a binary to run the built-in proxy',
      );
    }
    if (proxyConfig.interceptionMode !== 'NONE') {
      throw new AgentStartError(
        `the built-in proxy needs interceptionMode NONE (it binds each listener's own address); ${proxyConfig.interceptionMode} needs Envoy. ` +
          'Set it in PROXY_CONFIG or the mesh config defaultConfig',
      );
    }
    if (proxyConfig.controlPlaneAuthPolicy !== 'NONE') {
      throw new AgentStartError(
        'controlPlaneAuthPolicy MUTUAL_TLS needs a workload certificate, which this agent cannot obtain yet; ' +
          'set controlPlaneAuthPolicy: NONE and a plaintext discoveryAddress (the daemon\'s --grpcAddr, e.g. 127.0.0.1:15010)',
      );
    }
    log.info(`no Envoy binary at ${proxyConfig.binaryPath}: starting the built-in proxy`, { discoveryAddress: proxyConfig.discoveryAddress, node: this.options.node.id });
    this.proxy = new BuiltInProxy({
      discoveryAddress: proxyConfig.discoveryAddress,
      node: this.options.node,
      httpFilters: BUILTIN_HTTP_FILTERS,
      networkFilters: BUILTIN_NETWORK_FILTERS,
      log: (level, message) => log[level](message),
    });
    const proxy = this.proxy;
    this.status = new StatusServer({
      notReadyReason: () => (proxy.ready() ? undefined : proxy.connected() ? 'waiting for the first configuration' : `not connected to ${proxyConfig.discoveryAddress}`),
    });
    const statusPort = await this.status.start('', this.options.statusPort);
    log.info(`status server listening on :${statusPort} (/healthz/ready)`);
    this.admin = new BuiltInAdminServer(proxy);
    const adminPort = await this.admin.start(proxyConfig.proxyAdminPort);
    log.info(`proxy admin listening on 127.0.0.1:${adminPort}`);
    proxy.start();
  }

  async stop(): Promise<void> {
    await this.proxy?.stop();
    await this.admin?.stop();
    await this.status?.stop();
  }
}

/**
 * `pilot-agent proxy`: decides which proxy to run (Envoy when its binary is at ProxyConfig
 * `binaryPath`, else the built-in proxy), obtains the workload certificate and serves it over
 * SDS, carries the proxy's xDS to the daemon (over TLS with that certificate), serves the
 * status port, and drains on stop.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { ScopedLogger } from '../logging';
import { BuiltInProxy } from '../proxy/builtin-proxy';
import { BUILTIN_HTTP_FILTERS, BUILTIN_NETWORK_FILTERS } from '../proxy/builtin-filters';
import type { AdsNode } from '../proxy/xds/ads-client';
import { BuiltInAdminServer } from './builtin-admin';
import { ProxyConfig } from './proxy-config';
import { AgentSecurity, AgentSecurityOptions, SDS_SOCKET_PATH } from './security/agent-security';
import { StatusServer } from './status-server';
import { XdsProxy } from './xds-proxy';

export class AgentStartError extends Error {}

export interface DrainOptions {
  /** MINIMUM_DRAIN_DURATION: how long the agent stays up, not ready, after a stop signal. */
  minimumMs: number;
  /** EXIT_ON_ZERO_ACTIVE_CONNECTIONS: then wait (up to drainDuration) until no connection is open. */
  exitOnZeroActiveConnections: boolean;
  /** ProxyConfig drainDuration: the longest wait for connections to close. */
  maxMs: number;
}

export interface AgentOptions {
  proxyConfig: ProxyConfig;
  node: AdsNode;
  statusPort: number;
  log: ScopedLogger;
  /** Workload certificates; required for controlPlaneAuthPolicy MUTUAL_TLS, optional otherwise (data-plane mTLS). */
  security?: AgentSecurityOptions;
  drain: DrainOptions;
}

/** The proxy's xDS socket (the incumbent's `./etc/istio/proxy/XDS`), under ProxyConfig configPath. */
export function xdsSocketPath(proxyConfig: ProxyConfig): string {
  return path.join(proxyConfig.configPath, 'XDS');
}

export class Agent {
  private proxy?: BuiltInProxy;
  private admin?: BuiltInAdminServer;
  private status?: StatusServer;
  private security?: AgentSecurity;
  private xdsProxy?: XdsProxy;
  private waitingFor: string | undefined = 'starting';
  private draining = false;
  private stopped = false;

  constructor(private readonly options: AgentOptions) {}

  async start(): Promise<void> {
    const { proxyConfig, log } = this.options;
    if (fs.existsSync(proxyConfig.binaryPath)) {
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
    const mutualTls = proxyConfig.controlPlaneAuthPolicy === 'MUTUAL_TLS';
    if (mutualTls && !this.options.security) throw new AgentStartError('controlPlaneAuthPolicy MUTUAL_TLS needs the workload certificate settings');

    this.status = new StatusServer({ notReadyReason: () => this.notReadyReason() });
    const statusPort = await this.status.start('', this.options.statusPort);
    log.info(`status server listening on :${statusPort} (/healthz/ready)`);

    let discoveryAddress = proxyConfig.discoveryAddress;
    let sdsSocketPath: string | undefined;
    if (this.options.security) {
      this.security = new AgentSecurity(this.options.security);
      this.waitingFor = 'waiting for the workload certificate';
      const first = await this.security.start(
        (reason) => {
          this.waitingFor = `waiting for the workload certificate: ${reason}`;
          log.warn(`cannot get the workload certificate yet: ${reason}`);
        },
        () => this.stopped,
      );
      if (!first) return;
      sdsSocketPath = SDS_SOCKET_PATH;
      log.info(`SDS serving ${first.identity} on ${SDS_SOCKET_PATH}`);
      const security = this.security;
      this.security.secrets.onChange(() => this.xdsProxy?.credentialsChanged());
      this.xdsProxy = new XdsProxy({
        socketPath: xdsSocketPath(proxyConfig),
        upstreamAddress: proxyConfig.discoveryAddress,
        upstreamCredentials: () => (mutualTls ? security.xdsCredentials() : grpc.credentials.createInsecure()),
        channelOptions: mutualTls ? { 'grpc.ssl_target_name_override': this.options.security.serverName, 'grpc.default_authority': this.options.security.serverName } : {},
        log: (level, message) => log[level](message),
      });
      await this.xdsProxy.start();
      discoveryAddress = `unix:${path.resolve(xdsSocketPath(proxyConfig))}`;
      log.info(`xDS proxy on ${xdsSocketPath(proxyConfig)} → ${proxyConfig.discoveryAddress} (${mutualTls ? 'mutual TLS' : 'plaintext'})`);
    }
    this.waitingFor = undefined;

    log.info(`no Envoy binary at ${proxyConfig.binaryPath}: starting the built-in proxy`, { discoveryAddress: proxyConfig.discoveryAddress, node: this.options.node.id });
    this.proxy = new BuiltInProxy({
      discoveryAddress,
      node: this.options.node,
      httpFilters: BUILTIN_HTTP_FILTERS,
      networkFilters: BUILTIN_NETWORK_FILTERS,
      sdsSocketPath,
      log: (level, message) => log[level](message),
    });
    this.admin = new BuiltInAdminServer(this.proxy);
    const adminPort = await this.admin.start(proxyConfig.proxyAdminPort);
    log.info(`proxy admin listening on 127.0.0.1:${adminPort}`);
    this.proxy.start();
  }

  /**
   * Drains, then stops: not ready at once (so traffic moves elsewhere), up for at least
   * MINIMUM_DRAIN_DURATION, and with EXIT_ON_ZERO_ACTIVE_CONNECTIONS until the last
   * connection closes (at most drainDuration).
   */
  async stop(): Promise<void> {
    const { drain, log } = this.options;
    this.draining = true;
    if (this.proxy && drain.minimumMs > 0) {
      log.info(`draining for ${drain.minimumMs} ms`);
      await sleep(drain.minimumMs);
    }
    if (this.proxy && drain.exitOnZeroActiveConnections) {
      const deadline = Date.now() + drain.maxMs;
      while (this.proxy.activeConnections() > 0 && Date.now() < deadline) await sleep(100);
      const left = this.proxy.activeConnections();
      log.info(left === 0 ? 'no active connections left' : `drain time is up with ${left} connections open`);
    }
    this.stopped = true;
    await this.proxy?.stop();
    await this.xdsProxy?.stop();
    await this.security?.stop();
    await this.admin?.stop();
    await this.status?.stop();
  }

  private notReadyReason(): string | undefined {
    if (this.draining) return 'draining';
    if (this.waitingFor) return this.waitingFor;
    const proxy = this.proxy;
    if (!proxy) return 'starting';
    if (proxy.ready()) return undefined;
    return proxy.connected() ? 'waiting for the first configuration' : `not connected to ${this.options.proxyConfig.discoveryAddress}`;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

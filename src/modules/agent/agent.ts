/**
 * `pilot-agent proxy`: decides which proxy to run (Envoy when its binary is at ProxyConfig
 * `binaryPath`, else the built-in proxy), obtains the workload certificate and serves it over
 * SDS, carries the proxy's xDS to the daemon (over TLS with that certificate), serves the
 * status port, and drains on stop.
 */
import { ChildProcess, spawn } from 'node:child_process';
import cluster from 'node:cluster';
import * as os from 'node:os';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import type * as grpc from '@grpc/grpc-js';
import { grpcLibrary } from '../shared/grpc-library';
import { inject, injectable } from 'inversify';
import { Logging, LoggingToken } from '../logging/logging';
import { BuiltInProxy, BuiltInProxyView } from '../proxy/builtin-proxy';
import { Settings, SettingsToken } from '../settings/settings';
import { UserError } from '../shared/user-error';
import { AgentMetrics } from './metrics';
import { BuiltInAdminServer } from './admin/server';
import { builtInProxyLoggers, builtInProxyVersion } from './builtin-proxy-setup';
import { BuildInfo, BuildInfoToken } from '../build-info';
import { AgentFlags, AgentFlagsToken, AgentOptions, agentOptions } from './options';
import { AgentSecurity } from './security/agent-security';
import { StatusServer } from './status-server';
import { XdsProxy } from './xds-proxy';
import { DnsProxyServer, NameTableClient } from './dns';
import { ProxyWorker } from './proxy-workers/worker';
import { ProxyWorkerPool } from './proxy-workers/pool';
import { DEFAULT_SDS_SOCKET_PATH, envoyArgs, writeEnvoyBootstrap, writeGrpcBootstrap, xdsSocketPath } from './bootstrap';

export class AgentStartError extends UserError {}

/**
 * Resolved with the command's flags bound (AgentFlagsToken); its options come from them and the
 * settings (options.ts), so a bad value fails the resolution with the UserError naming it.
 */
@injectable()
export class Agent {
  private readonly options: AgentOptions;
  private proxy?: BuiltInProxyView;
  /** In a proxy worker process (`--concurrency` > 1): the only thing running. */
  private worker?: ProxyWorker;
  private admin?: BuiltInAdminServer;
  private status?: StatusServer;
  private security?: AgentSecurity;
  private xdsProxy?: XdsProxy;
  private dns?: DnsProxyServer;
  private envoy?: ChildProcess;
  private nameTables?: NameTableClient;
  private proxyExitListener?: (message: string) => void;
  private waitingFor: string | undefined = 'starting';
  private draining = false;
  private proxyless = false;
  private stopped = false;
  readonly metrics = new AgentMetrics();

  constructor(
    @inject(SettingsToken) settings: Settings,
    @inject(AgentFlagsToken) flags: AgentFlags,
    @inject(LoggingToken) logging: Logging,
    @inject(BuiltInProxy) private readonly builtIn: BuiltInProxy,
    @inject(BuildInfoToken) private readonly build: BuildInfo,
  ) {
    this.options = agentOptions(settings, flags, logging.scope('default'));
  }

  /** Called when the proxy process ends on its own (the command then exits non-zero); the agent has logged it. */
  onProxyExit(listener: (message: string) => void): void {
    this.proxyExitListener = listener;
  }

  /** Starts everything; a system error at start (a port in use, a file it cannot write) is the user's to fix. */
  async start(): Promise<void> {
    if (cluster.isWorker) return this.startProxyWorker();
    try {
      await this.startAll();
    } catch (err) {
      if (err instanceof UserError || !(err as NodeJS.ErrnoException).code) throw err;
      throw new AgentStartError((err as Error).message);
    }
  }

  private async startAll(): Promise<void> {
    const { proxyConfig, log } = this.options;
    const envoy = fs.existsSync(proxyConfig.binaryPath);
    if (!envoy && proxyConfig.interceptionMode !== 'NONE') {
      throw new AgentStartError(
        `the built-in proxy needs interceptionMode NONE (it binds each listener's own address); ${proxyConfig.interceptionMode} needs Envoy at binaryPath ${proxyConfig.binaryPath}. ` +
          'Set it in PROXY_CONFIG or the mesh config defaultConfig',
      );
    }
    const mutualTls = proxyConfig.controlPlaneAuthPolicy === 'MUTUAL_TLS';
    if (mutualTls && !this.options.security) throw new AgentStartError('controlPlaneAuthPolicy MUTUAL_TLS needs the workload certificate settings');

    // With Envoy, Envoy owns PROXY_STATUS_PORT and forwards readiness to the agent's statusPort.
    this.status = new StatusServer({ notReadyReason: () => this.notReadyReason() }, { appProbers: this.options.appProbers, metrics: this.metrics });
    const statusPort = await this.status.start('', envoy ? proxyConfig.statusPort : this.options.statusPort);
    log.info(`status server listening on :${statusPort} (/healthz/ready)`);

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
      sdsSocketPath = DEFAULT_SDS_SOCKET_PATH;
      log.info(`SDS serving ${first.identity} on ${DEFAULT_SDS_SOCKET_PATH}`);
      this.security.secrets.onChange(() => this.xdsProxy?.credentialsChanged());
    }
    const discoveryAddress = await this.startXdsProxy(mutualTls);
    this.waitingFor = undefined;
    if (this.options.grpcBootstrapPath) {
      writeGrpcBootstrap(this.options.grpcBootstrapPath, { node: this.options.node, xdsSocketPath: xdsSocketPath(proxyConfig.configPath), outputCertsDir: this.options.security?.outputDir });
      log.info(`gRPC bootstrap written to ${this.options.grpcBootstrapPath}`);
    }
    await this.startDns(discoveryAddress);
    if (this.options.node.metadata.GENERATOR === 'grpc') {
      // Proxyless gRPC: the application is the xDS client (through the gRPC bootstrap).
      this.proxyless = true;
      log.info('proxyless gRPC (GENERATOR=grpc): no proxy is started; applications use the gRPC bootstrap');
    } else if (envoy) await this.startEnvoy();
    else await this.startBuiltIn(discoveryAddress, sdsSocketPath);
  }

  /** Proxy ↔ agent over a Unix socket, agent ↔ daemon over TLS (MUTUAL_TLS) or plain text (NONE). */
  private async startXdsProxy(mutualTls: boolean): Promise<string> {
    const { proxyConfig, log } = this.options;
    const security = this.security;
    const serverName = this.options.security?.serverName;
    const socket = xdsSocketPath(proxyConfig.configPath);
    this.xdsProxy = new XdsProxy({
      socketPath: socket,
      events: this.metrics.track({ connected: () => this.xdsProxy?.connected() ?? false, disconnectedForMs: () => this.xdsProxy?.disconnectedForMs() ?? 0 }),
      upstreamAddress: proxyConfig.discoveryAddress,
      upstreamCredentials: () => (mutualTls && security ? security.xdsCredentials() : grpcLibrary().credentials.createInsecure()),
      channelOptions: {
        ...keepaliveOptions(this.options.keepalive),
        ...(mutualTls && serverName ? { 'grpc.ssl_target_name_override': serverName, 'grpc.default_authority': serverName } : {}),
      },
      log: (level, message) => log[level](message),
    });
    await this.xdsProxy.start();
    log.info(`xDS proxy on ${socket} → ${proxyConfig.discoveryAddress} (${mutualTls ? 'mutual TLS' : 'plaintext'})`);
    return `unix:${path.resolve(socket)}`;
  }

  private async startBuiltIn(discoveryAddress: string, sdsSocketPath: string | undefined): Promise<void> {
    const { proxyConfig, log, envoy } = this.options;
    const workers = proxyWorkerCount(envoy.concurrency, envoy.cpuLimit);
    log.info(`no Envoy binary at ${proxyConfig.binaryPath}: starting the built-in proxy (${workers === 1 ? 'in the agent' : `${workers} worker processes`})`, {
      discoveryAddress: proxyConfig.discoveryAddress,
      node: this.options.node.id,
    });
    const loggers = builtInProxyLoggers(envoy.proxyLogLevel, envoy.proxyComponentLogLevel, log);
    // The built-in proxy speaks what Envoy would be bootstrapped with (MESH_DELTA_XDS).
    const protocol = this.options.envoy.delta ? 'delta' : 'sotw';
    const pool = workers === 1 ? undefined : new ProxyWorkerPool({ workers, discoveryAddress, node: this.options.node, protocol, loggers, sdsSocketPath, log });
    const proxy: BuiltInProxyView = pool ?? this.builtIn;
    this.proxy = proxy;
    // The admin port answers (PRE_INITIALIZING) while the workers start.
    this.admin = new BuiltInAdminServer(proxy, loggers, builtInProxyVersion(this.build));
    const adminPort = await this.admin.start(proxyConfig.proxyAdminPort);
    log.info(`proxy admin listening on 127.0.0.1:${adminPort}`);
    if (pool) {
      await pool.start();
      log.info(`built-in proxy workers started: pids ${pool.workerPids().join(', ')}`);
    } else {
      this.builtIn.start({ discoveryAddress, node: this.options.node, sdsSocketPath, loggers, protocol, stripFragmentFromPath: this.options.stripFragmentFromPath });
    }
    void proxy.whenReady().then(() => log.info(`built-in proxy ready: listeners ${Object.values(proxy.boundListeners()).join(', ') || '(none)'}`));
  }

  /** Envoy with the bootstrap written under configPath; its output goes to the agent's log. */
  private async startEnvoy(): Promise<void> {
    const { proxyConfig, log, node } = this.options;
    const e = this.options.envoy;
    const bootstrapFile = writeEnvoyBootstrap({
      ...e,
      node,
      proxyAdminPort: proxyConfig.proxyAdminPort,
      agentStatusPort: proxyConfig.statusPort,
      xdsSocketPath: xdsSocketPath(proxyConfig.configPath),
      sdsSocketPath: DEFAULT_SDS_SOCKET_PATH,
      configPath: proxyConfig.configPath,
      discoveryAddress: proxyConfig.discoveryAddress,
      stripFragmentFromPath: this.options.stripFragmentFromPath,
    });
    const args = envoyArgs({ ...e, bootstrapFile, drainDuration: proxyConfig.drainDuration, ipFamily: e.ipFamily ?? 'v4' });
    log.info(`starting Envoy: ${proxyConfig.binaryPath} ${args.join(' ')}`);
    const child = spawn(proxyConfig.binaryPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.envoy = child;
    const forward = (chunk: Buffer) => process.stderr.write(chunk);
    child.stdout.on('data', forward);
    child.stderr.on('data', forward);
    child.on('error', (err) => this.proxyExited(`Envoy could not start: ${err.message}`));
    child.on('exit', (code, signal) => {
      this.envoy = undefined;
      if (!this.stopped) this.proxyExited(`Envoy exited (${signal ?? `code ${code}`})`);
    });
  }

  /** A proxy worker: the built-in proxy's data plane, fed by the agent that forked it (proxy-workers/). */
  private async startProxyWorker(): Promise<void> {
    const { envoy, log } = this.options;
    const loggers = builtInProxyLoggers(envoy.proxyLogLevel, envoy.proxyComponentLogLevel, log);
    this.worker = new ProxyWorker(this.builtIn, { node: this.options.node, loggers, stripFragmentFromPath: this.options.stripFragmentFromPath });
    this.worker.start();
  }

  private proxyExited(message: string): void {
    this.options.log.error(message);
    this.proxyExitListener?.(message);
  }

  /**
   * Drains, then stops: not ready at once (so traffic moves elsewhere), up for at least
   * MINIMUM_DRAIN_DURATION, and with EXIT_ON_ZERO_ACTIVE_CONNECTIONS until the last
   * connection closes (at most drainDuration).
   */
  async stop(): Promise<void> {
    // A worker ignores signals: the agent drains, then stops it.
    if (this.worker) return this.worker.stopped;
    const { drain, log } = this.options;
    log.info('stopping the proxy');
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
    if (this.envoy && drain.exitOnZeroActiveConnections) log.info('Envoy drains its own connections (drain-time-s)');
    this.stopped = true;
    this.envoy?.kill('SIGTERM');
    this.nameTables?.stop();
    await this.dns?.stop();
    await this.proxy?.stop();
    await this.xdsProxy?.stop();
    await this.security?.stop();
    await this.admin?.stop();
    await this.status?.stop();
  }

  /** The DNS proxy, fed with the daemon's name table over its own xDS stream. */
  private async startDns(discoveryAddress: string): Promise<void> {
    const { node, log } = this.options;
    const wanted = ['DNS_CAPTURE', 'ENABLE_DNS_SERVER'].some((k) => String(node.metadata[k] ?? '').toLowerCase() === 'true');
    if (!wanted) return;
    const dnsLog = (level: 'debug' | 'info' | 'warn' | 'error', message: string) => log[level](message);
    this.dns = new DnsProxyServer({ address: this.options.dns.address, forwardParallel: this.options.dns.forwardParallel, proxyDomain: node.id.split('~')[3], log: dnsLog });
    const bound = await this.dns.start();
    log.info(`DNS proxy listening on ${bound.host}:${bound.port} (udp, tcp)`);
    const dns = this.dns;
    this.nameTables = new NameTableClient({
      address: discoveryAddress,
      node,
      onTable: (t) => dns.update(t),
      log: dnsLog,
    });
    this.nameTables.start();
  }

  private async notReadyReason(): Promise<string | undefined> {
    if (this.draining) return 'draining';
    if (this.waitingFor) return this.waitingFor;
    if (this.envoy) return envoyNotReady(this.options.proxyConfig.proxyAdminPort);
    if (this.proxyless) return undefined;
    const proxy = this.proxy;
    if (!proxy) return this.envoy === undefined && this.stopped ? 'stopped' : 'starting';
    if (proxy.ready()) return undefined;
    return proxy.connected() ? 'waiting for the first configuration' : `not connected to ${this.options.proxyConfig.discoveryAddress}`;
  }
}

/**
 * How many processes run the built-in proxy: `--concurrency` when given, else MESH_CPU_LIMIT
 * rounded up (as for Envoy), else one per core.
 */
export function proxyWorkerCount(concurrency: number, cpuLimit = 0): number {
  if (!Number.isInteger(concurrency) || concurrency < 0) {
    throw new AgentStartError(`--concurrency ${concurrency}: must be 0 (one worker per core) or a positive number of workers`);
  }
  if (concurrency > 0) return concurrency;
  if (cpuLimit > 0) return Math.ceil(cpuLimit);
  return os.availableParallelism();
}

/** gRPC keepalive toward the daemon, so a daemon that froze or vanished without a reset is noticed. */
function keepaliveOptions(keepalive: AgentOptions['keepalive']): grpc.ChannelOptions {
  if (!keepalive) return {};
  return { 'grpc.keepalive_time_ms': keepalive.intervalMs, 'grpc.keepalive_timeout_ms': keepalive.timeoutMs, 'grpc.keepalive_permit_without_calls': 1 };
}

/** Envoy's own readiness, from its admin `/ready`. */
function envoyNotReady(adminPort: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port: adminPort, path: '/ready', timeout: 1000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200 ? undefined : `Envoy admin /ready answered ${res.statusCode}`);
    });
    req.on('error', (err) => resolve(`Envoy admin 127.0.0.1:${adminPort} unreachable: ${err.message}`));
    req.on('timeout', () => req.destroy(new Error('timeout')));
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

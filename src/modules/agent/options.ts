/**
 * The agent's options, mapped from its settings and the `pilot-agent proxy` flags the command
 * binds (AgentFlagsToken) when it resolves the Agent.
 */
import { readBuildInfo } from '../build-info';
import type { ScopedLogger } from '../logging';
import { Duration } from '../settings/duration';
import type { Settings } from '../settings/settings';
import type { AdsNode } from '../proxy/xds/xds-client';
import { EnvoyArgsOptions, EnvoyBootstrapInputs, proxyIpFamily } from './bootstrap';
import { agentNode } from './node-identity';
import { AppProbers, parseAppProbers } from './probes';
import { loadAgentMeshConfig, ProxyConfig, ProxyConfigError } from './proxy-config';
import { AgentSecurityOptions } from './security/agent-security';
import { agentSecurityOptions } from './security/settings';

/** The `pilot-agent proxy` flags the agent reads. */
export const AgentFlagsToken = Symbol.for('mesh.agent.Flags');
export interface AgentFlags {
  meshConfig: string;
  domain: string;
  serviceCluster: string;
  outlierLogPath: string;
  templateFile: string;
  proxyLogLevel: string;
  proxyComponentLogLevel: string;
  concurrency: number;
}

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
  /** What the Envoy bootstrap and command line need beyond ProxyConfig (used when Envoy runs). */
  envoy: Omit<EnvoyBootstrapInputs, 'node' | 'proxyAdminPort' | 'agentStatusPort' | 'xdsSocketPath' | 'sdsSocketPath' | 'configPath' | 'discoveryAddress' | 'stripFragmentFromPath'> &
    Omit<EnvoyArgsOptions, 'bootstrapFile' | 'drainDuration' | 'ipFamily'>;
  /** GRPC_XDS_BOOTSTRAP when set in the environment: the bootstrap written for proxyless gRPC apps. */
  grpcBootstrapPath?: string;
  /** MESH_ORCH_APP_PROBERS, parsed. */
  appProbers?: AppProbers;
  /** DNS_PROXY_ADDR and DNS_FORWARD_PARALLEL; the proxy runs when node metadata DNS_CAPTURE or ENABLE_DNS_SERVER is true. */
  dns: { address: string; forwardParallel: boolean };
  /** GRPC_KEEPALIVE_INTERVAL and GRPC_KEEPALIVE_TIMEOUT: how soon a daemon that stopped answering is noticed. */
  keepalive?: { intervalMs: number; timeoutMs: number };
  /** HTTP_STRIP_FRAGMENT_FROM_PATH_UNSAFE_IF_DISABLED, for Envoy (a runtime flag) and the built-in proxy alike. */
  stripFragmentFromPath: boolean;
}

/** Throws the UserError naming the first setting, flag or file at fault. */
export function agentOptions(settings: Settings, flags: AgentFlags, log: ScopedLogger): AgentOptions {
  const { proxyConfig, trustDomain, rootNamespace, warnings } = loadAgentMeshConfig(flags.meshConfig, settings.string('PROXY_CONFIG'));
  for (const w of warnings) log.warn(w);
  const node = agentNode(settings, { domain: flags.domain, serviceCluster: flags.serviceCluster, interceptionMode: proxyConfig.interceptionMode, meshVersion: readBuildInfo().version });
  return {
    proxyConfig,
    node,
    statusPort: settings.int('PROXY_STATUS_PORT'),
    log,
    security: agentSecurityOptions(settings, proxyConfig, log, { trustDomain, systemNamespace: rootNamespace }),
    envoy: {
      proxyStatusPort: settings.int('PROXY_STATUS_PORT'),
      proxyMetricsPort: settings.int('PROXY_METRICS_PORT'),
      delta: settings.bool('MESH_DELTA_XDS'),
      ipFamily: proxyIpFamily([settings.string('INSTANCE_IP')]),
      outlierLogPath: flags.outlierLogPath || undefined,
      templateFile: flags.templateFile || undefined,
      overrideFile: settings.string('MESH_BOOTSTRAP_OVERRIDE') || undefined,
      proxyLogLevel: flags.proxyLogLevel,
      proxyComponentLogLevel: flags.proxyComponentLogLevel || undefined,
      concurrency: flags.concurrency,
      cpuLimit: settings.int('MESH_CPU_LIMIT'),
      skipDeprecatedLogs: settings.bool('PROXY_SKIP_DEPRECATED_LOGS'),
    },
    grpcBootstrapPath: settings.resolve('GRPC_XDS_BOOTSTRAP').fromEnvironment ? settings.string('GRPC_XDS_BOOTSTRAP') : undefined,
    appProbers: parseAppProbers(settings.string('MESH_ORCH_APP_PROBERS')),
    dns: { address: settings.string('DNS_PROXY_ADDR') ?? 'localhost:15053', forwardParallel: settings.bool('DNS_FORWARD_PARALLEL') },
    keepalive: { intervalMs: settings.duration('GRPC_KEEPALIVE_INTERVAL').milliseconds, timeoutMs: settings.duration('GRPC_KEEPALIVE_TIMEOUT').milliseconds },
    stripFragmentFromPath: settings.bool('HTTP_STRIP_FRAGMENT_FROM_PATH_UNSAFE_IF_DISABLED'),
    drain: {
      minimumMs: settings.duration('MINIMUM_DRAIN_DURATION').milliseconds,
      exitOnZeroActiveConnections: settings.bool('EXIT_ON_ZERO_ACTIVE_CONNECTIONS'),
      maxMs: drainDurationMs(proxyConfig.drainDuration),
    },
  };
}

function drainDurationMs(text: string): number {
  try {
    return Duration.parse(text).milliseconds;
  } catch (err) {
    throw new ProxyConfigError(`ProxyConfig drainDuration: ${(err as Error).message}`);
  }
}

import { inject } from 'inversify';
import { boolFlag, command, intFlag, MeshCommand, stringFlag } from '../../src/modules/cli';
import { Agent, AgentStartError } from '../../src/modules/agent/agent';
import { agentNode, NodeIdentityError } from '../../src/modules/agent/node-identity';
import { loadProxyConfig, ProxyConfigError } from '../../src/modules/agent/proxy-config';
import { Settings, SettingsToken } from '../../src/modules/settings';
import { Duration } from '../../src/modules/settings/duration';
import { agentSecurityOptions } from '../../src/modules/agent/security/settings';
import { AgentSecurityError } from '../../src/modules/agent/security/agent-security';
import { TokenError } from '../../src/modules/agent/security/token';
import { WorkloadKeyError } from '../../src/modules/agent/security/workload-key';
import { BootstrapError, proxyIpFamily } from '../../src/modules/agent/bootstrap';
import { AppProbersError, parseAppProbers } from '../../src/modules/agent/probes';

export const proxyFlags = {
  concurrency: intFlag('number of worker threads to run', { default: 0 }),
  domain: stringFlag('DNS domain suffix; if not provided uses ${POD_NAMESPACE}.svc.cluster.local', { default: '' }),
  meshConfig: stringFlag('file name for the mesh configuration; may be overridden by PROXY_CONFIG or the proxy.mesh.io/config annotation', {
    default: './etc/mesh/config/mesh',
  }),
  outlierLogPath: stringFlag('the log path for outlier detection', { default: '' }),
  profiling: boolFlag('enable profiling via web interface host:port/debug/pprof/'),
  proxyComponentLogLevel: stringFlag('deprecated, use --proxyLogLevel instead', { default: '' }),
  proxyLogLevel: stringFlag(
    'the log level used to start the proxy (one of trace, debug, info, warning, error, critical, off); may list scopes, e.g. info,misc:error,upstream:debug',
    { default: 'warning' },
  ),
  serviceCluster: stringFlag('service cluster', { default: 'mesh-proxy' }),
  stsPort: intFlag('HTTP port of the Security Token Service; 0 = not served', { default: 0 }),
  templateFile: stringFlag('go template bootstrap config', { default: '' }),
  tokenManagerPlugin: stringFlag('token provider plug-in name', { default: '' }),
};

@command({
  program: 'pilot-agent',
  path: 'proxy',
  summary: 'XDS proxy agent: bootstraps and runs the proxy',
  flags: proxyFlags,
})
export class Proxy extends MeshCommand {
  @inject(SettingsToken) private readonly settings!: Settings;

  async run(): Promise<void> {
    const { flags } = await this.parse(Proxy);
    const settings = this.settings;
    const log = this.logging.scope('default');
    let agent: Agent;
    try {
      const proxyConfig = loadProxyConfig(flags.meshConfig, process.env.PROXY_CONFIG);
      const instanceIp = settings.string('INSTANCE_IP');
      if (!instanceIp) this.fail('INSTANCE_IP is not set: the agent needs the workload address its listeners bind and the daemon knows it by');
      // POD_NAME and POD_NAMESPACE are the orchestrator's downward-API variables, not agent settings.
      const podNamespace = process.env.POD_NAMESPACE || 'default';
      const node = agentNode({
        env: process.env,
        instanceIp,
        podName: process.env.POD_NAME || 'workload',
        podNamespace,
        domain: flags.domain,
        serviceCluster: flags.serviceCluster,
        interceptionMode: proxyConfig.interceptionMode,
      });
      agent = new Agent({
        proxyConfig,
        node,
        statusPort: settings.int('PROXY_STATUS_PORT'),
        log,
        security: agentSecurityOptions(settings, proxyConfig, log),
        envoy: {
          proxyStatusPort: settings.int('PROXY_STATUS_PORT'),
          proxyMetricsPort: settings.int('PROXY_METRICS_PORT'),
          delta: settings.bool('MESH_DELTA_XDS'),
          ipFamily: proxyIpFamily([instanceIp]),
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
        onProxyExit: (message) => {
          log.error(message);
          process.exitCode = 1;
          void agent.stop().then(() => process.exit(1));
        },
        dns: { address: settings.string('DNS_PROXY_ADDR') ?? 'localhost:15053', forwardParallel: settings.bool('DNS_FORWARD_PARALLEL') },
        keepalive: { intervalMs: settings.duration('GRPC_KEEPALIVE_INTERVAL').milliseconds, timeoutMs: settings.duration('GRPC_KEEPALIVE_TIMEOUT').milliseconds },
        stripFragmentFromPath: settings.bool('HTTP_STRIP_FRAGMENT_FROM_PATH_UNSAFE_IF_DISABLED'),
        drain: {
          minimumMs: settings.duration('MINIMUM_DRAIN_DURATION').milliseconds,
          exitOnZeroActiveConnections: settings.bool('EXIT_ON_ZERO_ACTIVE_CONNECTIONS'),
          maxMs: drainDurationMs(proxyConfig.drainDuration),
        },
      });
      await agent.start();
    } catch (err) {
      if (err instanceof ProxyConfigError || err instanceof WorkloadKeyError || err instanceof TokenError || err instanceof AgentSecurityError || err instanceof BootstrapError || err instanceof AppProbersError || err instanceof NodeIdentityError || err instanceof AgentStartError || (err as NodeJS.ErrnoException).code) {
        this.fail((err as Error).message);
      }
      throw err;
    }
    await new Promise<void>((resolve) => {
      const onSignal = () => {
        process.off('SIGTERM', onSignal);
        process.off('SIGINT', onSignal);
        log.info('stopping the proxy');
        void agent.stop().finally(resolve);
      };
      process.on('SIGTERM', onSignal);
      process.on('SIGINT', onSignal);
    });
  }
}

function drainDurationMs(text: string): number {
  try {
    return Duration.parse(text).milliseconds;
  } catch (err) {
    throw new ProxyConfigError(`ProxyConfig drainDuration: ${(err as Error).message}`);
  }
}

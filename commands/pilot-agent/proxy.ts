import { boolFlag, command, intFlag, MeshCommand, stringFlag } from '../../src/modules/cli';
import { Agent, AgentFlagsToken } from '../../src/modules/agent';

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
  async run(): Promise<void> {
    const { flags } = await this.parse(Proxy);
    // Bad settings, flags or files fail here or in start() with a UserError the runner prints.
    const agent = this.scope.resolve(Agent, [[AgentFlagsToken, flags]]);
    agent.onProxyExit(() => {
      process.exitCode = 1;
      void agent.stop().then(() => process.exit(1));
    });
    await agent.start();
    await new Promise<void>((resolve) => {
      const onSignal = () => {
        process.off('SIGTERM', onSignal);
        process.off('SIGINT', onSignal);
        void agent.stop().finally(resolve);
      };
      process.on('SIGTERM', onSignal);
      process.on('SIGINT', onSignal);
    });
  }
}

import {
  boolFlag,
  command,
  durationFlag,
  givenFlags,
  floatFlag,
  intFlag,
  listFlag,
  mapFlag,
  MeshCommand,
  stringFlag,
  uint16Flag,
} from '../../src/modules/cli';
import { Daemon, DaemonFlags, DaemonFlagsToken, DaemonToken } from '../../src/modules/discovery';
import { MeshConfigFileToken, MeshNetworksFileToken } from '../../src/modules/mesh-config';
import { Duration } from '../../src/modules/settings/duration';
import { loggingFlags } from '../../src/modules/logging';

/** Flags of `pilot-discovery discovery` (spec/01), orchestrator-derived names per the naming rule. */
export const discoveryFlags = {
  caCertFile: stringFlag('file containing the x509 server CA certificate', { default: '' }),
  clusterAliases: mapFlag('alias names for clusters, form alias1=cluster1,alias2=cluster2', { default: {} }),
  clusterID: stringFlag('the ID of the cluster that this daemon instance resides in', { default: 'Orch' }),
  clusterRegistriesNamespace: stringFlag('namespace for the config map that stores cluster configs', { default: 'mesh-system' }),
  cniNamespace: stringFlag('namespace of the CNI installer; when unset uses ${POD_NAMESPACE}', { default: 'mesh-system' }),
  configDir: stringFlag('directory to watch for config YAML files; used as config source instead of the orchestrator client', { default: '' }),
  ctrlz_address: stringFlag('IP address to listen on for the introspection facility; use "*" for all addresses', { default: 'localhost' }),
  ctrlz_port: uint16Flag('IP port to use for the introspection facility', { default: 9876 }),
  domain: stringFlag('DNS domain suffix', { default: 'cluster.local' }),
  grpcAddr: stringFlag('discovery service gRPC address (plain text)', { default: ':15010' }),
  httpAddr: stringFlag('discovery service HTTP address (includes the debug interface unless ENABLE_DEBUG_ON_HTTP is false)', { default: ':8080' }),
  httpsAddr: stringFlag('injection and validation webhook HTTPS address', { default: ':15017' }),
  secureGRPCAddr: stringFlag('discovery service secured gRPC address', { default: ':15012' }),
  monitoringAddr: stringFlag('HTTP address for the self-monitoring information (metrics)', { default: ':15014' }),
  keepaliveInterval: durationFlag('interval of keepalive pings on an idle connection', { default: '30s' }),
  keepaliveMaxServerConnectionAge: durationFlag('longest time a server connection may live before it is closed gracefully', {
    default: '2562047h47m16.854775807s',
  }),
  keepaliveTimeout: durationFlag('time to wait after a keepalive ping before closing the connection', { default: '10s' }),
  orchconfig: stringFlag('use an orchestrator configuration file instead of in-cluster configuration', { default: '' }),
  orchApiBurst: intFlag('maximum burst for throttle toward the orchestrator API', { default: 160 }),
  orchApiQPS: floatFlag('maximum queries per second toward the orchestrator API', { default: 80 }),
  meshConfig: stringFlag('file name for the mesh configuration; a default mesh is used if absent', { default: './etc/mesh/config/mesh' }),
  namespace: stringFlag('namespace of the controller; when unset uses ${POD_NAMESPACE}', { char: 'n', default: 'mesh-system' }),
  networksConfig: stringFlag('file name for the mesh networks configuration; default networks if absent', {
    default: './etc/mesh/config/meshNetworks',
  }),
  profile: boolFlag('enable profiling through the web interface host:port/debug/pprof'),
  registries: listFlag('comma-separated list of service registries to read from (choose one or more from {Orch, Mock})', {
    default: ['Orch'],
  }),
  shutdownDuration: durationFlag('time allowed for graceful termination', { default: '10s' }),
  'tls-cipher-suites': listFlag('comma-separated list of cipher suites for the TLS server; default suites are used when omitted', {
    default: [],
  }),
  tlsCertFile: stringFlag('file containing the x509 server certificate', { default: '' }),
  tlsKeyFile: stringFlag('file containing the private key matching --tlsCertFile', { default: '' }),
  ...loggingFlags,
};

@command({
  program: 'pilot-discovery',
  path: 'discovery',
  summary: 'Start the mesh proxy discovery service',
  flags: discoveryFlags,
})
export class Discovery extends MeshCommand {
  async run(): Promise<void> {
    const { flags, metadata } = await this.parse(Discovery);
    const given = givenFlags(flags, metadata);
    const ms = (d: Duration) => Number(d.nanos / 1_000_000n);
    const daemonFlags: DaemonFlags = {
      configDir: flags.configDir,
      registries: flags.registries,
      domain: flags.domain,
      grpcAddr: flags.grpcAddr,
      httpAddr: flags.httpAddr,
      monitoringAddr: flags.monitoringAddr,
      keepaliveIntervalMs: ms(flags.keepaliveInterval),
      keepaliveTimeoutMs: ms(flags.keepaliveTimeout),
      keepaliveMaxServerConnectionAgeMs: ms(flags.keepaliveMaxServerConnectionAge),
      shutdownDurationMs: ms(flags.shutdownDuration),
      orchconfig: flags.orchconfig,
      orchApiQPS: flags.orchApiQPS,
      orchApiBurst: flags.orchApiBurst,
      // Unless given, the settings decide (CLUSTER_ID, POD_NAMESPACE), as the incumbent's defaults do.
      ...(given.has('clusterID') ? { clusterID: flags.clusterID } : {}),
      ...(given.has('namespace') ? { namespace: flags.namespace } : {}),
      secureGrpcAddr: flags.secureGRPCAddr,
      httpsAddr: flags.httpsAddr,
      tlsCertFile: flags.tlsCertFile,
      tlsKeyFile: flags.tlsKeyFile,
      caCertFile: flags.caCertFile,
      tlsCipherSuites: flags['tls-cipher-suites'],
      ctrlzAddress: flags.ctrlz_address,
      ctrlzPort: flags.ctrlz_port,
      profile: flags.profile ?? false,
    };
    // Resolving checks the flags, the settings and the mesh config; a UserError names what to fix.
    const daemon = this.scope.resolve<Daemon>(DaemonToken, [
      [DaemonFlagsToken, daemonFlags],
      [MeshConfigFileToken, flags.meshConfig],
      [MeshNetworksFileToken, flags.networksConfig],
    ]);
    try {
      await daemon.start();
    } catch (err) {
      // Whatever started is stopped (ports freed) before the error is reported.
      await daemon.stop().catch(() => undefined);
      throw err;
    }
    // Runs until SIGTERM or SIGINT, then stops gracefully within --shutdownDuration.
    await new Promise<void>((resolve) => {
      const onSignal = () => {
        process.off('SIGTERM', onSignal);
        process.off('SIGINT', onSignal);
        void daemon.stop().finally(resolve);
      };
      process.on('SIGTERM', onSignal);
      process.on('SIGINT', onSignal);
    });
  }
}

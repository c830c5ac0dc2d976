import { inject, injectable, multiInject, optional } from 'inversify';
import { MemoryConfigStore } from '../config';
import { InProcessProfiler, pprofResponse, PROFILING_OFF } from '../ctrlz';
import { configzHandler, DebugHandler, pluginsHandler, registryzHandler } from '../debug';
import { XdsGenerators } from '../generators';
import { PluginStatus, PluginStatusToken } from '../plugins';
import { XdsConnection } from '../xds/connection';
import { DebugResource } from '../xds/debug-requests';
import { XdsServer } from '../xds/server';
import { DaemonConfigSources } from './config-sources';
import { ControlPlaneInstance } from './control-plane-instance';
import { DaemonFlags, DaemonFlagsToken } from './daemon-flags';
import { PushCoordinator } from './push-coordinator';
import { configDumpJson, configDumpSections, findConnection, syncz } from './xds-debug';

/** A config dump that cannot be made: the HTTP status and the reason. */
export class ConfigDumpError extends Error {
  constructor(
    readonly status: 400 | 404 | 503,
    message: string,
  ) {
    super(message);
  }
}

/** The daemon's `/debug/...` pages, answered from its live services (on HTTP, and over xDS by DaemonXdsDebug). */
@injectable()
export class DaemonDebugHandlers {
  private readonly plugins: readonly PluginStatus[];

  constructor(
    @inject(XdsServer) private readonly xds: XdsServer,
    @inject(MemoryConfigStore) private readonly store: MemoryConfigStore,
    @inject(DaemonConfigSources) private readonly sources: DaemonConfigSources,
    @inject(PushCoordinator) private readonly coordinator: PushCoordinator,
    @inject(XdsGenerators) private readonly generators: XdsGenerators,
    @inject(ControlPlaneInstance) private readonly instance: ControlPlaneInstance,
    @inject(DaemonFlagsToken) private readonly flags: DaemonFlags,
    @inject(InProcessProfiler) private readonly profiler: InProcessProfiler,
    @multiInject(PluginStatusToken) @optional() plugins: PluginStatus[] | undefined,
  ) {
    this.plugins = plugins ?? [];
  }

  handlers(): DebugHandler[] {
    return [
      { path: '/debug/syncz', description: 'each connected proxy: per type, the version and nonce sent and acknowledged', handle: () => ({ json: syncz(this.xds.connections()) }) },
      {
        path: '/debug/config_dump',
        description: 'what the daemon would send a proxy now, as an Envoy config dump (?proxyID=<id>)',
        handle: (query) => {
          try {
            return { json: configDumpJson(this.configDump(query.get('proxyID') ?? '')) };
          } catch (err) {
            if (err instanceof ConfigDumpError) return { status: err.status, text: `${err.message}\n` };
            throw err;
          }
        },
      },
      configzHandler(() => this.store.snapshot()),
      {
        path: '/debug/config_files',
        description: 'each file under --configDir: the resources it contributes and why its content is rejected or skipped, if it is',
        handle: () => ({ json: this.sources.status() }),
      },
      registryzHandler(() => {
        const push = this.coordinator.currentPush();
        if (!push) return [];
        return push.services.map((s) => ({ ...s, endpoints: Object.fromEntries(s.ports.map((p) => [p.number, push.endpoints(s.hostname, p.number)])) }));
      }),
      pluginsHandler(() => this.plugins),
      { path: '/debug/version', description: "this daemon: its component, replica ID, revision and build", handle: () => ({ json: this.instance.describe() }) },
      {
        path: '/debug/clusterz',
        description: "the clusters whose services the daemon reads: its own and each remote cluster, with the remote secret and sync status",
        handle: () => ({ json: this.sources.clusters() }),
      },
      ...this.pprofHandlers(),
    ];
  }

  /** The proxy `proxyId` names (full ID or `<pod>.<namespace>`) among this daemon's connections. */
  connectionOf(proxyId: string): XdsConnection {
    if (!proxyId) throw new ConfigDumpError(400, 'proxyID is required: config_dump?proxyID=<node id or pod.namespace>');
    const conn = findConnection(this.xds.connections(), proxyId);
    // The proxy may be connected to another replica: the client then asks the next one.
    if (!conn) throw new ConfigDumpError(404, `no proxy ${proxyId} is connected to this daemon (${this.instance.id}); it may be connected to another replica`);
    return conn;
  }

  /** The sections of the config dump of `proxyId` (see configDumpSections). */
  configDump(proxyId: string): DebugResource[] {
    const conn = this.connectionOf(proxyId);
    const push = this.coordinator.currentPush();
    if (!push) throw new ConfigDumpError(503, 'no configuration is built yet');
    const generator = this.generators.byName.get(conn.proxy.generator) ?? this.generators.byName.get('');
    if (!generator) throw new ConfigDumpError(404, `no generator serves GENERATOR=${conn.proxy.generator} of ${conn.proxy.id}`);
    return configDumpSections(conn, push, generator);
  }

  /**
   * `/debug/pprof/...` here too (spec/01: profiling at host:port/debug/pprof), answered like
   * the ControlZ port answers it, from the same profiler (so one CPU profile runs at a time
   * across both). Without --profile they are listed and say how to turn profiling on.
   */
  private pprofHandlers(): DebugHandler[] {
    const off = this.flags.profile ? '' : ` (${PROFILING_OFF.split(':')[0]})`;
    const entries: Array<[string, string]> = [
      ['', 'index of the profiles'],
      ['/profile', 'CPU profile in the pprof format (?seconds=N)'],
      ['/heap', 'live heap profile in the pprof format (?gc=1 collects garbage first)'],
      ['/cmdline', 'the daemon command line, NUL-separated'],
    ];
    return entries.map(([suffix, description]) => ({
      path: `/debug/pprof${suffix}`,
      description: description + off,
      handle: async (query, signal) => {
        const r = await pprofResponse(`/debug/pprof${suffix}`, query, this.flags.profile ? this.profiler : undefined, signal);
        return { status: r.status, raw: { contentType: r.contentType, body: r.body, headers: r.headers } };
      },
    }));
  }
}

import { inject, injectable, multiInject, optional } from 'inversify';
import { MemoryConfigStore } from '../config';
import { InProcessProfiler, pprofResponse, PROFILING_OFF } from '../ctrlz';
import { configzHandler, DebugHandler, pluginsHandler, registryzHandler } from '../debug';
import { PluginStatus, PluginStatusToken } from '../plugins';
import { XdsServer } from '../xds/server';
import { DaemonConfigSources } from './config-sources';
import { DaemonFlags, DaemonFlagsToken } from './daemon-flags';
import { PushCoordinator } from './push-coordinator';
import { configDump, findConnection, syncz } from './xds-debug';

/** The daemon's `/debug/...` pages, answered from its live services. */
@injectable()
export class DaemonDebugHandlers {
  private readonly plugins: readonly PluginStatus[];

  constructor(
    @inject(XdsServer) private readonly xds: XdsServer,
    @inject(MemoryConfigStore) private readonly store: MemoryConfigStore,
    @inject(DaemonConfigSources) private readonly sources: DaemonConfigSources,
    @inject(PushCoordinator) private readonly coordinator: PushCoordinator,
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
        description: 'what a proxy was sent, as an Envoy config dump (?proxyID=<id>)',
        handle: (query) => {
          const id = query.get('proxyID');
          if (!id) return { status: 400, text: 'proxyID is required: /debug/config_dump?proxyID=<node id>\n' };
          const conn = findConnection(this.xds.connections(), id);
          if (!conn) return { status: 404, text: `no connected proxy with ID ${id}\n` };
          return { json: configDump(conn) };
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
      {
        path: '/debug/clusterz',
        description: "the clusters whose services the daemon reads: its own and each remote cluster, with the remote secret and sync status",
        handle: () => ({ json: this.sources.clusters() }),
      },
      ...this.pprofHandlers(),
    ];
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

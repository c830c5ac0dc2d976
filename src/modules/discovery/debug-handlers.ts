import { inject, injectable, multiInject, optional } from 'inversify';
import { MemoryConfigStore } from '../config';
import { configzHandler, DebugHandler, pluginsHandler, registryzHandler } from '../debug';
import { PluginStatus, PluginStatusToken } from '../plugins';
import { XdsServer } from '../xds/server';
import { DaemonConfigSources } from './config-sources';
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
    ];
  }
}

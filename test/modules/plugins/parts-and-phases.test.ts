import { expect } from 'chai';
import { HttpFilterContributor, NetworkFilterContributor } from '../../../src/modules/model/generator';
import { meshPlugin, orderByPhase, PluginLoadError, resolvePlugins } from '../../../src/modules/plugins';
import { Settings } from '../../../src/modules/settings';

const settings = new Settings('pilot-discovery', { PILOT_HTTP10: 'true' });

describe('plugins: parts of one plugin, and phases', () => {
  it('classes with one name from one source are the parts of one plugin', () => {
    @meshPlugin({ name: 'two-parts', enabledBy: 'PILOT_HTTP10', provides: [HttpFilterContributor], description: 'daemon part' })
    class DaemonPart {}
    @meshPlugin({ name: 'two-parts', enabledBy: 'PILOT_HTTP10', provides: [NetworkFilterContributor] })
    class ProxyPart {}
    const [status] = resolvePlugins(settings, [
      { cls: DaemonPart, source: 'built-in' },
      { cls: ProxyPart, source: 'built-in' },
    ]);
    expect(status).to.include({ name: 'two-parts', enabled: true, description: 'daemon part', reason: 'PILOT_HTTP10=true' });
    expect(status.classes).to.deep.equal([DaemonPart, ProxyPart]);
    expect(status.provides).to.deep.equal([HttpFilterContributor, NetworkFilterContributor]);
  });

  it('refuses parts that disagree on their setting, and a name two sources use', () => {
    @meshPlugin({ name: 'split', enabledBy: 'PILOT_HTTP10', provides: [HttpFilterContributor] })
    class A {}
    @meshPlugin({ name: 'split', enabledBy: 'PILOT_ENABLE_ALPN_FILTER', provides: [HttpFilterContributor] })
    class B {}
    expect(() => resolvePlugins(settings, [{ cls: A, source: 'built-in' }, { cls: B, source: 'built-in' }])).to.throw(
      PluginLoadError,
      'built-in plugin "split": B is enabled by PILOT_ENABLE_ALPN_FILTER but A, part of the same plugin, by PILOT_HTTP10',
    );
    expect(() => resolvePlugins(settings, [{ cls: A, source: 'built-in' }, { cls: A, source: 'mesh-plugin-x' }])).to.throw(
      PluginLoadError,
      'plugin "split" from "mesh-plugin-x": the name is already used by a plugin from "built-in"',
    );
  });

  it('orders contributions by phase, then by the order they were bound', () => {
    const make = (name: string, phase?: 'first' | 'authn' | 'authz' | 'default' | 'last') => {
      const cls = class {};
      Object.defineProperty(cls, 'name', { value: name });
      meshPlugin({ name, enabledBy: 'PILOT_HTTP10', provides: [HttpFilterContributor], ...(phase ? { phase } : {}) })(cls);
      return new cls();
    };
    const bound = [make('telemetry'), make('rbac-network', 'last'), make('rbac', 'authz'), make('jwt', 'authn'), make('mx', 'first'), make('alpn', 'default')];
    class Core {}
    const ordered = orderByPhase([...bound, new Core()]).map((c) => c.constructor.name);
    expect(ordered).to.deep.equal(['mx', 'jwt', 'rbac', 'telemetry', 'alpn', 'Core', 'rbac-network']);
  });

  it('rejects an unknown phase where the plugin is declared', () => {
    expect(() => meshPlugin({ name: 'x', enabledBy: 'PILOT_HTTP10', provides: [HttpFilterContributor], phase: 'early' as never })(class {})).to.throw(
      '@meshPlugin x: phase must be one of first, authn, authz, default, last',
    );
  });
});

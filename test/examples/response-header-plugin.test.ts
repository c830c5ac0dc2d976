/**
 * The example third-party plugin (examples/plugins/response-header), loaded with MESH_PLUGINS by
 * a real daemon and real agents running the built-in proxy in front of a real app: the header is
 * on the app's responses when the plugin is on in both, absent when it is off or not loaded; an
 * agent without the plugin rejects the listener naming the filter; `meshctl experimental plugins`
 * lists it. The optional-filter case, which the plugin does not generate, is scripted.
 */
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { TypeUrl } from '../../src/modules/envoy/type-urls';
import { HCM_TYPE, ROUTER_TYPE } from '../../src/modules/envoy/well-known';
import type { BuiltInProxy } from '../../src/modules/proxy/builtin-proxy';
import { ProxyLoggers } from '../../src/modules/proxy/logging/proxy-loggers';
import { RunningAgent, startAgent } from '../helpers/agent';
import { builtInProxy } from '../helpers/builtin-proxy';
import { RunningDaemon, startDaemon } from '../helpers/daemon';
import { HttpApp, request, startHttpApp } from '../helpers/http-apps';
import { workloadServiceYaml } from '../helpers/push';
import { REPO_ROOT, runCli } from '../helpers/run-cli';
import { ScriptedAds } from '../helpers/scripted-ads';
import { usesSharedLoopbackNetwork } from '../helpers/shared-network';

usesSharedLoopbackNetwork();

/** The example compiles to dist/examples/; the programs run in their own directories, so by absolute path. */
const PLUGIN = path.join(REPO_ROOT, 'dist', 'examples', 'plugins', 'response-header');
/** As a user at the repository root would write it. */
const PLUGIN_RELATIVE = './dist/examples/plugins/response-header';
const FILTER = 'example.response_header';
const CONFIG_TYPE = 'type.googleapis.com/example.filters.http.response_header.v1.Config';
const HEADER = 'x-mesh-served-by';

/** One workload per case, each with its own address; no outbound listeners (they would all bind 127.0.0.1:9091). */
const WORKLOADS = { on: '127.0.0.71', unloaded: '127.0.0.72', off: '127.0.0.73', absent: '127.0.0.74' } as const;
type Case = keyof typeof WORKLOADS;

function config(appPort: number): string {
  const services = (Object.keys(WORKLOADS) as Case[]).map((name) =>
    workloadServiceYaml({ namespace: 'foo', name, address: WORKLOADS[name], ports: [`{ number: 9091, name: http, protocol: HTTP, targetPort: ${appPort} }`] }),
  );
  const noEgress = 'apiVersion: networking.mesh.io/v1\nkind: Sidecar\nmetadata: { name: default, namespace: foo }\nspec: { egress: [{ hosts: ["mesh-system/*"] }] }\n';
  return [...services, noEgress].join('\n---\n');
}

describe('example plugin response-header on both planes (MESH_PLUGINS)', function () {
  this.timeout(90_000);
  let dir: string;
  let app: HttpApp;
  const daemons: RunningDaemon[] = [];
  const agents = new Map<Case, RunningAgent>();

  const daemon = async (env: Record<string, string>) => {
    const d = await startDaemon(['--configDir', dir], { PILOT_DEBOUNCE_AFTER: '10ms', PILOT_DEBOUNCE_MAX: '100ms', ...env });
    daemons.push(d);
    return d;
  };
  const agent = async (name: Case, d: RunningDaemon, env: Record<string, string>) => {
    const a = await startAgent({ grpcPort: d.grpcPort, instanceIp: WORKLOADS[name], namespace: 'foo', labels: { app: name, version: 'v1' }, env });
    agents.set(name, a);
    return a;
  };
  const send = (name: Case) => request(WORKLOADS[name], 9091, '/items?page=2', { host: `${name}.foo.svc.cluster.local`, 'x-user': 'alice' });

  before(async () => {
    app = await startHttpApp('shop');
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-example-plugin-'));
    fs.writeFileSync(path.join(dir, 'services.yaml'), config(app.port));
    const on = { MESH_PLUGINS: PLUGIN, EXAMPLE_RESPONSE_HEADER: 'true' };
    const [withPlugin, settingOff, withoutPlugin] = await Promise.all([
      daemon({ ...on, EXAMPLE_RESPONSE_HEADER_VALUE: '%SERVICE% %METHOD% %PATH% user=%REQ(X-User)% %RESPONSE_CODE%' }),
      daemon({ MESH_PLUGINS: PLUGIN, EXAMPLE_RESPONSE_HEADER: 'false' }),
      daemon({}),
    ]);
    await Promise.all([
      agent('on', withPlugin, on).then((a) => a.waitForLog(/built-in proxy ready/, 20_000)),
      agent('unloaded', withPlugin, {}).then((a) => a.waitForLog(/rejected Listener version/, 20_000)),
      agent('off', settingOff, { MESH_PLUGINS: PLUGIN, EXAMPLE_RESPONSE_HEADER: 'false' }).then((a) => a.waitForLog(/built-in proxy ready/, 20_000)),
      agent('absent', withoutPlugin, {}).then((a) => a.waitForLog(/built-in proxy ready/, 20_000)),
    ]);
  });

  after(async () => {
    for (const a of agents.values()) await a.stop();
    for (const d of daemons) await d.stop();
    await app?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('on in the daemon and the agent: the app answer carries the header computed from the config and the request', async () => {
    const answer = await send('on');
    expect(answer.status).to.equal(200);
    expect(answer.body).to.equal('shop GET /items?page=2');
    expect(answer.headers[HEADER]).to.equal('on.foo.svc.cluster.local GET /items?page=2 user=alice 200');
    // The app saw the request as usual: the filter acts on responses only.
    expect(app.requests.at(-1)!.headers['x-user']).to.equal('alice');
  });

  it('off (its setting false) or not loaded at all: no header, traffic as usual', async () => {
    for (const name of ['off', 'absent'] as const) {
      const answer = await send(name);
      expect(answer.status, name).to.equal(200);
      expect(answer.body, name).to.equal('shop GET /items?page=2');
      expect(answer.headers, name).to.not.have.property(HEADER);
    }
  });

  it('an agent without the plugin NACKs the listener, naming the filter and its type URL, and is not ready', async () => {
    const unloaded = agents.get('unloaded')!;
    expect(unloaded.output()).to.match(
      new RegExp(`rejected Listener version \\S+: listener \\S+: http filter ${FILTER.replace('.', '\\.')}: ${CONFIG_TYPE.replace(/\./g, '\\.')} is not supported by the built-in proxy`),
    );
    const ready = await request('127.0.0.1', unloaded.statusPort, '/healthz/ready');
    expect(ready.status).to.equal(503);
    // Nothing listens for it: the update that would have bound the listener was refused whole.
    const refused = await send('unloaded').then(
      () => 'answered',
      (e: NodeJS.ErrnoException) => e.code,
    );
    expect(refused).to.equal('ECONNREFUSED');
  });

  it('`meshctl experimental plugins` lists it with its source, on or off as the environment says', async () => {
    const rowOf = async (env: Record<string, string>) => {
      const r = await runCli('meshctl', ['experimental', 'plugins', '--program', 'pilot-agent', '-o', 'json'], { env: { MESH_PLUGINS: PLUGIN_RELATIVE, ...env } });
      expect(r.code, r.stderr).to.equal(0);
      return (JSON.parse(r.stdout) as Record<string, unknown>[]).find((row) => row.name === 'response-header');
    };
    expect(await rowOf({ EXAMPLE_RESPONSE_HEADER: 'true' })).to.include({ source: PLUGIN_RELATIVE, enabled: true, reason: 'EXAMPLE_RESPONSE_HEADER=true' });
    expect(await rowOf({})).to.include({ source: PLUGIN_RELATIVE, enabled: false, reason: 'EXAMPLE_RESPONSE_HEADER=false (default)' });
    const table = await runCli('meshctl', ['experimental', 'plugins'], { env: { MESH_PLUGINS: PLUGIN_RELATIVE } });
    expect(table.stdout).to.match(/response-header\s+\.\/dist\/examples\/plugins\/response-header\s+off\s+EXAMPLE_RESPONSE_HEADER=false \(default\)\n/);
  });
});

describe('a built-in proxy without the plugin, sent the filter marked is_optional (scripted ADS)', function () {
  this.timeout(20_000);
  let ads: ScriptedAds;
  let proxy: BuiltInProxy;
  const logs: string[] = [];

  /** The Config message as bytes (header_name = "x-tag"): the typed_config of a daemon that knows the proto. */
  const rawConfig = { type_url: CONFIG_TYPE, value: Buffer.concat([Buffer.from([0x0a, 5]), Buffer.from('x-tag')]) };
  const listener = (isOptional: boolean) => ({
    '@type': TypeUrl.Listener,
    name: 'inbound',
    address: { socket_address: { address: '127.0.0.75', port_value: 0 } },
    filter_chains: [
      {
        filters: [
          {
            name: 'envoy.filters.network.http_connection_manager',
            typed_config: {
              '@type': HCM_TYPE,
              stat_prefix: 'inbound',
              route_config: { name: 'local', virtual_hosts: [{ name: 'all', domains: ['*'], routes: [{ match: { prefix: '/' }, direct_response: { status: 200, body: { inline_string: 'ok' } } }] }] },
              http_filters: [
                { name: FILTER, typed_config: rawConfig, is_optional: isOptional },
                { name: 'envoy.filters.http.router', typed_config: { '@type': ROUTER_TYPE } },
              ],
            },
          },
        ],
      },
    ],
  });

  before(async () => {
    ads = new ScriptedAds('sotw');
    const port = await ads.start();
    // Listener versions in turn: optional, not optional (refused), optional again.
    const versions = [true, false, true];
    ads.onRequest = (stream, r) => {
      const nonce = String(r.response_nonce ?? '');
      if (r.type_url === TypeUrl.Cluster && nonce === '') stream.call.write({ type_url: TypeUrl.Cluster, version_info: 'c1', nonce: 'c1', resources: [] });
      if (r.type_url !== TypeUrl.Listener) return;
      const next = nonce === '' ? 0 : Number(nonce.slice(1));
      if (next < versions.length) stream.call.write({ type_url: TypeUrl.Listener, version_info: `v${next + 1}`, nonce: `l${next + 1}`, resources: [listener(versions[next])] });
    };
    proxy = builtInProxy();
    proxy.start({ discoveryAddress: `127.0.0.1:${port}`, node: { id: 'sidecar~127.0.0.75~p.foo~foo.svc.cluster.local', cluster: 'p', metadata: {} }, loggers: new ProxyLoggers((r) => logs.push(`${r.level} ${r.message}`), 'info') });
    await ads.until(() => ads.streams[0]?.requests.some((r) => r.response_nonce === 'l3'));
  });

  after(async () => {
    await proxy?.stop();
    ads?.stop();
  });

  it('accepts the listener and skips the filter, saying so once however many updates carry it', async () => {
    const answers = ads.streams[0].requests.filter((r) => r.type_url === TypeUrl.Listener && r.response_nonce);
    expect(answers.map((r) => [r.response_nonce, r.version_info, Boolean(r.error_detail)])).to.deep.equal([
      ['l1', 'v1', false],
      ['l2', 'v1', true],
      ['l3', 'v3', false],
    ]);
    expect(answers[1].error_detail.message).to.contain(`http filter ${FILTER}: ${CONFIG_TYPE} is not supported by the built-in proxy`);
    expect(logs.filter((l) => l.includes('is optional and not supported'))).to.deep.equal([
      `info http filter ${FILTER} (${CONFIG_TYPE}) is optional and not supported by the built-in proxy: skipped`,
    ]);
    const port = Number(proxy.boundListeners().inbound.split(':')[1]);
    const answer = await request('127.0.0.75', port, '/');
    expect([answer.status, answer.body]).to.deep.equal([200, 'ok']);
  });
});

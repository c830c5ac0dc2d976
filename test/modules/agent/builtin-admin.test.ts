/**
 * The built-in proxy's admin port over real HTTP, as Envoy's admin answers: /logging (list,
 * change all, one, several; Envoy's error text for a bad logger or level; POST only for
 * changes), and the levels really decide what the proxy logs; the home page, /help, 404s,
 * /server_info, /stats and the config dump's sections, mask and include_eds.
 */
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { RunningAgent, startAgent } from '../../helpers/agent';
import { RunningDaemon, startDaemon } from '../../helpers/daemon';
import { HttpApp, request, startHttpApp } from '../../helpers/http-apps';
import { waitFor } from '../../helpers/orch-mesh';
import { workloadServiceYaml } from '../../helpers/push';
import { usesSharedLoopbackNetwork } from '../../helpers/shared-network';

usesSharedLoopbackNetwork();

const IP = '127.0.0.44';
const SERVICE = (appPort: number) =>
  workloadServiceYaml({ namespace: 'foo', name: 'cart', address: IP, ports: [`{ number: 9082, name: http, protocol: HTTP, targetPort: ${appPort} }`], labels: { app: 'cart' } });

const LOGGERS = ['admin', 'config', 'connection', 'ext_authz', 'filter', 'http', 'jwt', 'main', 'misc', 'rbac', 'router', 'secret', 'upstream'];
const USAGE =
  'usage: /logging?<name>=<level> (change single level)\n' +
  'usage: /logging?paths=name1:level1,name2:level2,... (change multiple levels)\n' +
  'usage: /logging?level=<level> (change all levels)\n' +
  'levels: trace debug info warning error critical off \n';

function admin(port: number, method: string, pathAndQuery: string): Promise<{ status: number; type: string; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path: pathAndQuery, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), body }));
    });
    req.on('error', reject);
    req.setTimeout(5000, () => req.destroy(new Error(`${method} ${pathAndQuery} timed out`)));
    req.end();
  });
}

function loggersList(levels: Record<string, string>): string {
  return `active loggers:\n${LOGGERS.map((n) => `  ${n}: ${levels[n]}\n`).join('')}\n`;
}
const all = (level: string): Record<string, string> => Object.fromEntries(LOGGERS.map((n) => [n, level]));

describe('built-in proxy admin port', function () {
  this.timeout(40_000);
  let dir: string;
  let daemon: RunningDaemon;
  let app: HttpApp;
  let agent: RunningAgent;

  before(async () => {
    app = await startHttpApp('cart');
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-admin-'));
    fs.writeFileSync(path.join(dir, 'cart.yaml'), SERVICE(app.port));
    daemon = await startDaemon(['--configDir', dir], { PILOT_DEBOUNCE_AFTER: '10ms' });
    agent = await startAgent({ grpcPort: daemon.grpcPort, instanceIp: IP, namespace: 'foo', labels: { app: 'cart' }, args: ['--proxyLogLevel', 'warning,upstream:info,redis:debug'] });
    await agent.waitForLog(/built-in proxy ready/, 15_000);
  });

  after(async () => {
    await agent?.stop();
    await daemon?.stop();
    await app?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const requestThroughProxy = async () => {
    const answer = await request(IP, 9082, '/cart/items', { host: 'cart.foo.svc.cluster.local' });
    expect(answer.status).to.equal(200);
  };

  it('starts its loggers at --proxyLogLevel, skipping with a warning the Envoy loggers it lacks', async () => {
    const res = await admin(agent.adminPort, 'GET', '/logging');
    expect(res.status).to.equal(200);
    expect(res.body).to.equal(loggersList({ ...all('warning'), upstream: 'info' }));
    await agent.waitForLog(/the built-in proxy has no logger redis \(its loggers: admin, config, .*\); those levels are ignored/);
    // upstream at info: the clusters applied were logged, in the agent's Envoy log format.
    await agent.waitForLog(/\d{4}-\d\d-\d\dT[\d:.]+Z\tinfo\tenvoy upstream\tcds: \d+ cluster\(s\) applied\n/);
  });

  it('sets every logger with POST /logging?level=, and the proxy logs at that level from then on', async () => {
    await requestThroughProxy();
    expect(agent.output()).to.not.match(/\tdebug\tenvoy http\t/);
    const res = await admin(agent.adminPort, 'POST', '/logging?level=debug');
    expect(res.status).to.equal(200);
    expect(res.body).to.equal(loggersList(all('debug')));
    const since = agent.output().length;
    await requestThroughProxy();
    const logged = await agent.waitForLog(/\tdebug\tenvoy http\trequest from 127\.0\.0\.1:\d+ on 127\.0\.0\.44:9082: GET cart\.foo\.svc\.cluster\.local\/cart\/items\n/, 5000, since);
    expect(logged).to.contain('envoy http');
    await agent.waitForLog(/\tdebug\tenvoy router\tcluster 'inbound\|9082\|\|' match for URL '\/cart\/items'/, 5000, since);
  });

  it('sets one logger with POST /logging?<logger>=<level> and several with paths=', async () => {
    expect((await admin(agent.adminPort, 'POST', '/logging?level=warning')).status).to.equal(200);
    // The admin logger (at debug until this change) said what changed, at info, as Envoy's does.
    // (Waited for: stderr can arrive after the HTTP answer.)
    await agent.waitForLog(/\tinfo\tenvoy admin\tchange all log levels: level='warning'\n/);
    const one = await admin(agent.adminPort, 'POST', '/logging?rbac=trace');
    expect(one.status).to.equal(200);
    expect(one.body).to.equal(loggersList({ ...all('warning'), rbac: 'trace' }));
    const several = await admin(agent.adminPort, 'POST', '/logging?paths=http:error,router:critical,jwt:off');
    expect(several.status).to.equal(200);
    expect(several.body).to.equal(loggersList({ ...all('warning'), rbac: 'trace', http: 'error', router: 'critical', jwt: 'off' }));
    const since = agent.output().length;
    await requestThroughProxy();
    await new Promise((r) => setTimeout(r, 200));
    expect(agent.output().slice(since)).to.not.match(/envoy (http|router)\t/);
  });

  it("refuses an unknown logger or level with Envoy's 400 text, changing nothing", async () => {
    const before = (await admin(agent.adminPort, 'GET', '/logging')).body;
    const logger = await admin(agent.adminPort, 'POST', '/logging?redis=debug');
    expect(logger.status).to.equal(400);
    expect(logger.body).to.equal(`error: unknown logger name\n\n${USAGE}${before}`);
    const level = await admin(agent.adminPort, 'POST', '/logging?level=loud');
    expect([level.status, level.body]).to.deep.equal([400, `error: unknown logger level\n\n${USAGE}${before}`]);
    const mixed = await admin(agent.adminPort, 'POST', '/logging?paths=http:debug,nosuch:info');
    expect([mixed.status, mixed.body]).to.deep.equal([400, `error: unknown logger name\n\n${USAGE}${before}`]);
    const empty = await admin(agent.adminPort, 'POST', '/logging?paths=http:');
    expect(empty.body).to.match(/^error: empty logger name or empty logger level\n/);
    const two = await admin(agent.adminPort, 'POST', '/logging?http=debug&rbac=info');
    expect(two.body).to.match(/^error: invalid number of parameters\n/);
    expect((await admin(agent.adminPort, 'GET', '/logging')).body).to.equal(before);
  });

  it('takes changes only by POST, as Envoy', async () => {
    const before = (await admin(agent.adminPort, 'GET', '/logging')).body;
    const res = await admin(agent.adminPort, 'GET', '/logging?level=trace');
    expect([res.status, res.body]).to.deep.equal([405, 'Method GET not allowed, POST required.']);
    expect((await admin(agent.adminPort, 'PUT', '/logging?level=trace')).status).to.equal(405);
    expect((await admin(agent.adminPort, 'GET', '/logging')).body).to.equal(before);
  });

  it('serves a home page listing the admin paths, /help, and a 404 with the help for unknown paths', async () => {
    const home = await admin(agent.adminPort, 'GET', '/');
    expect(home.status).to.equal(200);
    expect(home.type).to.match(/^text\/html/);
    for (const p of ['clusters', 'config_dump', 'help', 'listeners', 'ready', 'server_info', 'stats']) expect(home.body).to.contain(`<a href="${p}">${p}</a>`);
    expect(home.body).to.contain('<form action="logging" method="post">');
    const help = await admin(agent.adminPort, 'GET', '/help');
    expect(help.body).to.match(/^admin commands are:\n {2}\/: Admin home page\n {2}\/clusters: upstream cluster status\n/);
    expect(help.body).to.contain('  /logging (POST): query/change logging levels\n');
    const missing = await admin(agent.adminPort, 'GET', '/nothing');
    expect(missing.status).to.equal(404);
    expect(missing.body).to.equal(`invalid path. ${help.body}`);
  });

  it("answers /server_info with Envoy's fields and /stats as text or JSON", async () => {
    const info = JSON.parse((await admin(agent.adminPort, 'GET', '/server_info')).body);
    expect(info.state).to.equal('LIVE');
    expect(info.version).to.match(/^[^/]+\/\d+\.\d+\.\d+\/[^/]+\/RELEASE\/OpenSSL-/);
    expect(info.node.id).to.equal(`sidecar~${IP}~app.foo~foo.svc.cluster.local`);
    expect(info.uptime_current_epoch).to.match(/^\d+s$/);
    expect(info).to.have.keys('version', 'state', 'hot_restart_version', 'command_line_options', 'node', 'uptime_current_epoch', 'uptime_all_epochs');
    const stats = (await admin(agent.adminPort, 'GET', '/stats')).body;
    expect(stats).to.match(/^cluster_manager\.active_clusters: [1-9]\d*\n/);
    expect(stats).to.contain('server.live: 1\n');
    const filtered = JSON.parse((await admin(agent.adminPort, 'GET', '/stats?format=json&filter=^server\\.live$')).body);
    expect(filtered).to.deep.equal({ stats: [{ name: 'server.live', value: 1 }] });
  });

  it('dumps bootstrap, clusters, listeners, routes and secrets; endpoints with include_eds; mask trims each section', async () => {
    const types = (body: string) => JSON.parse(body).configs.map((c: { '@type': string }) => c['@type'].split('.').pop());
    expect(types((await admin(agent.adminPort, 'GET', '/config_dump')).body)).to.deep.equal([
      'BootstrapConfigDump',
      'ClustersConfigDump',
      'ListenersConfigDump',
      'RoutesConfigDump',
      'SecretsConfigDump',
    ]);
    const withEds = JSON.parse((await admin(agent.adminPort, 'GET', '/config_dump?include_eds=true')).body);
    expect(withEds.configs.at(-1)['@type']).to.match(/EndpointsConfigDump$/);
    expect(withEds.configs[0].bootstrap.node.id).to.equal(`sidecar~${IP}~app.foo~foo.svc.cluster.local`);
    const masked = JSON.parse((await admin(agent.adminPort, 'GET', '/config_dump?mask=dynamic_active_clusters,static_clusters')).body);
    expect(masked.configs.map((c: object) => Object.keys(c))).to.deep.equal([['@type'], ['@type', 'dynamic_active_clusters'], ['@type'], ['@type'], ['@type']]);
    const unsupported = await admin(agent.adminPort, 'GET', '/config_dump?resource=dynamic_listeners');
    expect(unsupported.status).to.equal(400);
    await waitFor(() => admin(agent.adminPort, 'GET', '/ready'), (r) => r.status === 200, 'ready');
    expect((await admin(agent.adminPort, 'GET', '/ready')).body).to.equal('LIVE\n');
  });
});

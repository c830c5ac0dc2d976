/**
 * Issue 17 acceptance: meshctl diagnosing a running mesh as an operator would, end to end. The
 * in-process orchestrator API server; the daemon on it, registered as the pod meshd-… of
 * mesh-system (its xDS port 15012, ControlZ 9876 and HTTP debug port 8080 forwarded); two
 * agents with built-in proxies registered as pods (admin port 15000). meshctl → API server →
 * port-forward → daemon or proxy, for proxy-status (with a TokenRequest token), proxy-config
 * (cluster, listener, route, endpoint, secret), x authz check, proxy-config log, admin log,
 * dashboard proxy and meshd-debug, x describe pod; and the errors on the way.
 */
import { expect } from 'chai';
import * as http from 'node:http';
import * as net from 'node:net';
import { RunningAgent, startAgent } from '../../helpers/agent';
import { RunningDaemon } from '../../helpers/daemon';
import { HttpApp, request, startHttpApp } from '../../helpers/http-apps';
import { orchTokenJwtRule, OrchWorld, runPod, startOrchDaemon, startOrchWorld, waitFor } from '../../helpers/orch-mesh';
import { RunningProgram, startProgram } from '../../helpers/program';
import { CliResult, runCli } from '../../helpers/run-cli';
import { usesSharedLoopbackNetwork } from '../../helpers/shared-network';

usesSharedLoopbackNetwork();

const NS = 'foo';
const MESHD_POD = 'meshd-5d8f7c9b4-x2x7q';
const PODS = [
  { name: 'productpage-v1-6b746f74dc-9stvs', app: 'productpage', ip: '127.0.0.91', port: 9080 },
  { name: 'reviews-v1-545db77b95-jkz6c', app: 'reviews', ip: '127.0.0.92', port: 9081 },
];

function workloads(appPorts: number[]): string {
  return PODS.map(
    (p, i) => `apiVersion: v1
kind: Pod
metadata:
  name: ${p.name}
  namespace: ${NS}
  labels: { app: ${p.app}, version: v1 }
  annotations: { test.orch/pod-ip: "${p.ip}" }
spec:
  serviceAccountName: default
  containers: [{ name: ${p.app}, image: ${p.app}, ports: [{ containerPort: ${appPorts[i]}, name: http }] }, { name: mesh-proxy, image: proxyv2 }]
---
apiVersion: v1
kind: Service
metadata: { name: ${p.app}, namespace: ${NS} }
spec:
  selector: { app: ${p.app} }
  ports: [{ name: http, port: ${p.port}, targetPort: ${appPorts[i]} }]
`,
  ).join('---\n') + SIDECARS;
}

// Both proxies run on this machine: productpage calls reviews on its own address, reviews calls nothing.
const SIDECARS = `---
apiVersion: networking.mesh.io/v1
kind: Sidecar
metadata: { name: productpage, namespace: ${NS} }
spec:
  workloadSelector: { labels: { app: productpage } }
  egress: [{ port: { number: 9081, protocol: HTTP, name: http }, bind: 127.0.0.91, hosts: ["${NS}/*"] }]
---
apiVersion: networking.mesh.io/v1
kind: Sidecar
metadata: { name: reviews, namespace: ${NS} }
spec:
  workloadSelector: { labels: { app: reviews } }
  egress: [{ hosts: ["mesh-system/*"] }]
---
apiVersion: security.mesh.io/v1
kind: PeerAuthentication
metadata: { name: default, namespace: ${NS} }
spec: { mtls: { mode: PERMISSIVE } }
`;

const POLICY = `apiVersion: security.mesh.io/v1
kind: AuthorizationPolicy
metadata: { name: productpage-viewer, namespace: ${NS} }
spec:
  selector: { matchLabels: { app: productpage } }
  action: ALLOW
  rules:
  - to: [{ operation: { methods: ["GET"] } }]
  - from: [{ source: { namespaces: ["${NS}"] } }]
`;

function adminGet(port: number, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.setTimeout(5000, () => req.destroy(new Error(`GET ${path} timed out`)));
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

describe('issue 17 acceptance: meshctl diagnosing a running mesh through the orchestrator API and port-forward', function () {
  this.timeout(120_000);
  let world: OrchWorld;
  let daemon: RunningDaemon;
  const agents: RunningAgent[] = [];
  const apps: HttpApp[] = [];
  const [productpage, reviews] = PODS;

  const meshctl = (args: string[], timeoutMs = 20_000): Promise<CliResult> => runCli('meshctl', ['--orchconfig', world.kubeconfig, ...args], { timeoutMs });

  before(async () => {
    for (const p of PODS) apps.push(await startHttpApp(p.app));
    world = await startOrchWorld({ namespaces: [NS] });
    await world.apply(workloads(apps.map((a) => a.port)));
    // The daemon checks meshctl's TokenRequest tokens with the API server's keys, as on a cluster.
    daemon = await startOrchDaemon(world, [], { JWT_RULE: await orchTokenJwtRule(world.server), POD_NAME: MESHD_POD });
    await runPod(world.server, {
      name: MESHD_POD,
      namespace: 'mesh-system',
      labels: { app: 'meshd' },
      ports: { 15012: daemon.secureGrpcPort, 9876: daemon.ctrlzPort, 8080: daemon.httpPort },
    });
    for (const p of PODS) {
      const agent = await startAgent({ grpcPort: daemon.grpcPort, instanceIp: p.ip, namespace: NS, labels: { app: p.app, version: 'v1' }, env: { POD_NAME: p.name } });
      agents.push(agent);
      await agent.waitForLog(/built-in proxy ready/, 15_000);
      world.server.portForward.register(NS, p.name, 15000, { host: '127.0.0.1', port: agent.adminPort });
    }
  });

  after(async () => {
    for (const a of agents) await a.stop();
    await daemon?.stop();
    await world?.close();
    for (const a of apps) await a.close();
  });

  it('proxy-status lists both proxies as SYNCED, asking the daemon pod over xDS through a port-forward with a token', async () => {
    const rows = await waitFor(
      async () => {
        const r = await meshctl(['proxy-status', '--verbosity', '1']);
        return r.code === 0 ? r.stdout.trimEnd().split('\n').map((line) => line.split(/ {2,}/)) : [[r.stderr]];
      },
      (table) => table.length === 3 && table.slice(1).every((row) => row.filter((cell) => cell === 'SYNCED').length >= 2),
      'both proxies synced',
      20_000,
    );
    expect(rows[0].slice(0, 2)).to.deep.equal(['NAME', 'CLUSTER']);
    expect(rows.slice(1).map((row) => row[0])).to.deep.equal(PODS.map((p) => `sidecar~${p.ip}~${p.name}.${NS}~${NS}.svc.cluster.local`));
    expect(rows.slice(1).map((row) => row[row.length - 2])).to.deep.equal([MESHD_POD, MESHD_POD]);
    expect(world.server.requests.count({ verb: 'create', resource: 'serviceaccounts/token' })).to.be.greaterThan(0);
  });

  it('proxy-config cluster, listener and route read the live proxy of the pod named', async () => {
    const clusters = await meshctl(['proxy-config', 'cluster', `${productpage.name}.${NS}`]);
    expect(clusters.code, clusters.stderr).to.equal(0);
    expect(clusters.stdout).to.match(/^SERVICE FQDN +PORT +SUBSET +DIRECTION +TYPE +DESTINATION RULE\n/);
    expect(clusters.stdout).to.match(new RegExp(`^reviews\\.${NS}\\.svc\\.cluster\\.local +${reviews.port} +- +outbound +EDS`, 'm'));
    // -n instead of .<namespace>, and the JSON form.
    const json = await meshctl(['proxy-config', 'c', productpage.name, '-n', NS, '--fqdn', 'reviews', '-o', 'json']);
    expect(json.code, json.stderr).to.equal(0);
    expect(JSON.parse(json.stdout).map((c: { name: string }) => c.name)).to.include(`outbound|${reviews.port}||reviews.${NS}.svc.cluster.local`);

    const listeners = await meshctl(['proxy-config', 'listener', productpage.name, '-n', NS]);
    expect(listeners.code, listeners.stderr).to.equal(0);
    expect(listeners.stdout).to.match(/^ADDRESSES +PORT +TYPE\n/);
    expect(listeners.stdout).to.contain(productpage.ip);

    const routes = await meshctl(['proxy-config', 'route', `${productpage.name}.${NS}`]);
    expect(routes.code, routes.stderr).to.equal(0);
    expect(routes.stdout).to.match(/^NAME +VHOST NAME +DOMAINS +MATCH +VIRTUAL SERVICE\n/);
    expect(routes.stdout).to.contain(`reviews.${NS}.svc.cluster.local`);
  });

  it('proxy-config endpoint reads the proxy\'s /clusters; secret its SDS secrets', async () => {
    const endpoints = await meshctl(['proxy-config', 'endpoint', `${productpage.name}.${NS}`, '--cluster', `outbound|${reviews.port}||reviews.${NS}.svc.cluster.local`]);
    expect(endpoints.code, endpoints.stderr).to.equal(0);
    const endpoint = `${reviews.ip}:${apps[1].port}`;
    expect(endpoints.stdout).to.equal(
      `${'ENDPOINT'.padEnd(endpoint.length + 5)}STATUS      OUTLIER CHECK     CLUSTER\n${endpoint}     HEALTHY     OK                outbound|${reviews.port}||reviews.${NS}.svc.cluster.local\n`,
    );
    const secrets = await meshctl(['proxy-config', 'secret', `${reviews.name}.${NS}`, '-o', 'json']);
    expect(secrets.code, secrets.stderr).to.equal(0);
    expect(JSON.parse(secrets.stdout)).to.have.property('dynamicActiveSecrets');
  });

  it('x authz check lists the AuthorizationPolicy applied to the pod, read from its proxy', async () => {
    const before = await meshctl(['x', 'authz', 'check', `${productpage.name}.${NS}`]);
    expect(before.code, before.stderr).to.equal(0);
    expect(before.stdout).to.not.contain('productpage-viewer');
    await world.apply(POLICY);
    const after = await waitFor(() => meshctl(['x', 'authz', 'check', productpage.name, '-n', NS]), (r) => r.stdout.includes('productpage-viewer'), 'the policy in the proxy', 15_000);
    expect(after.stdout).to.equal(`ACTION   AuthorizationPolicy      RULES\nALLOW    productpage-viewer.${NS}   2\n`);
    // The other workload is not selected.
    const other = await meshctl(['authz', 'check', `${reviews.name}.${NS}`]);
    expect(other.stdout).to.not.contain('productpage-viewer');
  });

  it('x describe pod names the Service, the policy and the mTLS mode of the pod', async () => {
    await world.apply(POLICY);
    const r = await waitFor(() => meshctl(['x', 'describe', 'pod', `${productpage.name}.${NS}`]), (out) => out.stdout.includes('productpage-viewer'), 'the policy in describe', 15_000);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.match(new RegExp(`^Pod: ${productpage.name}\\.${NS}\\n`));
    expect(r.stdout, r.stdout).to.contain(`Service: ${productpage.app}.${NS}\n`);
    expect(r.stdout).to.contain(`RBAC policies: ns[${NS}]-policy[productpage-viewer]-rule[0], ns[${NS}]-policy[productpage-viewer]-rule[1]\n`);
    expect(r.stdout).to.contain('Workload mTLS mode: PERMISSIVE\n');
  });

  it('admin log shows the daemon\'s scopes and --level ads:debug changes its level, through ControlZ', async () => {
    const shown = await meshctl(['admin', 'log']);
    expect(shown.code, shown.stderr).to.equal(0);
    expect(shown.stdout).to.match(/^ACTIVE SCOPE +DESCRIPTION +LOG LEVEL +STACK TRACE LEVEL\n/);
    expect(shown.stdout).to.match(/^ads +.* info +none$/m);
    const set = await meshctl(['admin', 'log', '--level', 'ads:debug']);
    expect(set.code, set.stderr).to.equal(0);
    const scope = JSON.parse((await adminGet(daemon.ctrlzPort, '/scopej/ads')).body) as { output_level: string };
    expect(scope.output_level).to.equal('debug');
    await meshctl(['admin', 'log', '--reset']);
    expect((JSON.parse((await adminGet(daemon.ctrlzPort, '/scopej/ads')).body) as { output_level: string }).output_level).to.equal('info');
  });

  it('proxy-config log shows the levels, --level debug changes them (the proxy then logs at debug), --reset puts them back', async () => {
    const shown = await meshctl(['proxy-config', 'log', `${reviews.name}.${NS}`]);
    expect(shown.code, shown.stderr).to.equal(0);
    expect(shown.stdout).to.match(new RegExp(`^${reviews.name}\\.${NS}:\\nactive loggers:\\n  admin: warning\\n`));

    const set = await meshctl(['proxy-config', 'o', reviews.name, '-n', NS, '--level', 'debug']);
    expect(set.code, set.stderr).to.equal(0);
    expect(set.stdout).to.contain(`${reviews.name}.${NS}:\nactive loggers:\n  admin: debug\n  config: debug\n`);
    expect(set.stdout).to.not.contain(': warning');
    const admin = agents[1].adminPort;
    const levels = (await adminGet(admin, '/logging')).body;
    expect(levels).to.contain('  http: debug\n').and.contain('  router: debug\n');
    const since = agents[1].output().length;
    const answer = await request(reviews.ip, reviews.port, '/reviews/1', { host: `reviews.${NS}.svc.cluster.local` });
    expect(answer.status).to.equal(200);
    await agents[1].waitForLog(/\tdebug\tenvoy http\trequest from .*: GET reviews\.foo\.svc\.cluster\.local\/reviews\/1\n/, 5000, since);

    const one = await meshctl(['proxy-config', 'log', `${reviews.name}.${NS}`, '--level', 'http:error,rbac:trace', '-o', 'json']);
    expect(one.code, one.stderr).to.equal(0);
    const byPod = JSON.parse(one.stdout)[`${reviews.name}.${NS}`];
    expect([byPod.http, byPod.rbac, byPod.router]).to.deep.equal(['error', 'trace', 'debug']);

    const reset = await meshctl(['proxy-config', 'log', `${reviews.name}.${NS}`, '-r']);
    expect(reset.code, reset.stderr).to.equal(0);
    expect((await adminGet(admin, '/logging')).body).to.not.match(/: (debug|trace|error)\n/);
  });

  it('proxy-config log -l changes every pod the selector matches', async () => {
    const r = await meshctl(['proxy-config', 'log', '-l', 'version=v1', '-n', NS, '--level', 'jwt:info']);
    expect(r.code, r.stderr).to.equal(0);
    for (const p of PODS) expect(r.stdout).to.contain(`${p.name}.${NS}:\nactive loggers:\n`);
    for (const a of agents) expect((await adminGet(a.adminPort, '/logging')).body).to.contain('  jwt: info\n');
  });

  it('dashboard proxy --browser=false prints a URL serving the proxy admin page until SIGINT, then exits 0', async () => {
    const port = await freePort();
    const dash: RunningProgram = startProgram('meshctl', ['--orchconfig', world.kubeconfig, 'dashboard', 'proxy', `${productpage.name}.${NS}`, '--browser=false', '--address', '127.0.0.1', '-p', String(port)], {});
    try {
      const url = (await dash.waitForLog(/^http:\/\/\S+\n/m, 15_000)).trim();
      expect(url).to.equal(`http://127.0.0.1:${port}`);
      await dash.waitForLog(/skipping opening a browser/);
      const page = await adminGet(port, '/');
      expect(page.status).to.equal(200);
      expect(page.body).to.contain('<a href="config_dump">config_dump</a>');
      expect((await adminGet(port, '/server_info')).body).to.contain(`${productpage.name}.${NS}`);
    } finally {
      expect(await dash.stop('SIGINT')).to.equal(0);
    }
    // The forward is gone with it.
    const refused = await adminGet(port, '/').then(() => 'answered', (e: NodeJS.ErrnoException) => e.code);
    expect(refused).to.equal('ECONNREFUSED');
  });

  it('dashboard sidecar says it is deprecated and serves the same page', async () => {
    const dash = startProgram('meshctl', ['--orchconfig', world.kubeconfig, 'dashboard', 'sidecar', reviews.name, '-n', NS, '--browser=false', '--address', '127.0.0.1', '-p', String(await freePort())], {});
    try {
      const url = (await dash.waitForLog(/^http:\/\/\S+\n/m, 15_000)).trim();
      expect(dash.output()).to.contain('"dashboard sidecar" is deprecated');
      expect((await adminGet(Number(new URL(url).port), '/')).body).to.contain('<form action="logging" method="post">');
    } finally {
      expect(await dash.stop('SIGTERM')).to.equal(0);
    }
  });

  it('dashboard meshd-debug opens the daemon pod\'s /debug (first app=meshd pod in the mesh namespace); an add-on dashboard finds its pod by label', async () => {
    await world.apply(`apiVersion: v1
kind: Pod
metadata: { name: metrics-store-0, namespace: mesh-system, labels: { app: metrics-store } }
spec: { containers: [{ name: server, image: metrics-store }] }
`);
    const store = http.createServer((_req, res) => res.end('metrics store UI\n'));
    await new Promise<void>((r) => store.listen(0, '127.0.0.1', r));
    world.server.portForward.register('mesh-system', 'metrics-store-0', 9090, { host: '127.0.0.1', port: (store.address() as net.AddressInfo).port });
    try {
      const debugPort = await freePort();
      const debug = startProgram('meshctl', ['--orchconfig', world.kubeconfig, 'dashboard', 'meshd-debug', '--browser=false', '--address', '127.0.0.1', '-p', String(debugPort)], {});
      try {
        const url = (await debug.waitForLog(/^http:\/\/\S+\n/m, 15_000)).trim();
        expect(url).to.equal(`http://127.0.0.1:${debugPort}/debug`);
        const index = await adminGet(debugPort, '/debug');
        expect(index.status).to.equal(200);
        expect(index.body).to.contain('/debug/syncz');
      } finally {
        expect(await debug.stop('SIGINT')).to.equal(0);
      }
      const storePort = await freePort();
      const ui = startProgram('meshctl', ['--orchconfig', world.kubeconfig, 'dashboard', 'metrics-store', '--browser=false', '--address', '127.0.0.1', '-p', String(storePort)], {});
      try {
        expect((await ui.waitForLog(/^http:\/\/\S+\n/m, 15_000)).trim()).to.equal(`http://127.0.0.1:${storePort}`);
        expect((await adminGet(storePort, '/')).body).to.equal('metrics store UI\n');
      } finally {
        expect(await ui.stop('SIGINT')).to.equal(0);
      }
      const none = await meshctl(['dashboard', 'topology', '--browser=false']);
      expect([none.code, none.stderr]).to.deep.equal([1, 'Error: no topology UI pods found: no running pod matches app=topology in namespace mesh-system\n']);
    } finally {
      await new Promise((r) => store.close(r));
    }
  });

  it('names the pod and namespace when it is not there, and refuses a bad level before any request', async () => {
    const missing = await meshctl(['proxy-config', 'cluster', `details-v1.${NS}`]);
    expect([missing.code, missing.stderr]).to.deep.equal([1, `Error: pod details-v1 not found in namespace ${NS}\n`]);
    const authz = await meshctl(['x', 'authz', 'check', 'ghost', '-n', 'bar']);
    expect(authz.stderr).to.equal('Error: pod ghost not found in namespace bar\n');
    const forwards = world.server.requests.count({ resource: 'pods/portforward' });
    const bad = await meshctl(['proxy-config', 'log', `${reviews.name}.${NS}`, '--level', 'http:loud']);
    expect(bad.code).to.equal(1);
    expect(bad.stderr).to.equal('Error: --level "http:loud": unrecognized logging level "loud"; levels are trace, debug, info, warning, error, critical, off\n');
    expect(world.server.requests.count({ resource: 'pods/portforward' })).to.equal(forwards);
    const unknown = await meshctl(['proxy-config', 'log', `${reviews.name}.${NS}`, '--level', 'redis:debug']);
    expect(unknown.code).to.equal(1);
    expect(unknown.stderr).to.match(new RegExp(`^Error: unrecognized logger name redis for pod ${reviews.name} in namespace ${NS}; its loggers are admin, config, `));
    const usage = await meshctl(['proxy-config', 'listener']);
    expect([usage.code, usage.stderr]).to.deep.equal([1, 'Error: listener requires pod name or --file parameter\n']);
    const logUsage = await meshctl(['proxy-config', 'log']);
    expect(logUsage.stderr).to.equal('Error: log requires pod name or --selector\n');
  });

  it('names the pod when its admin port does not answer', async () => {
    world.server.portForward.unregister(NS, productpage.name, 15000);
    try {
      const r = await meshctl(['proxy-config', 'cluster', `${productpage.name}.${NS}`]);
      expect(r.code).to.equal(1);
      expect(r.stderr).to.contain(productpage.name).and.contain(NS);
      expect(r.stderr.split('\n').length).to.equal(2);
    } finally {
      world.server.portForward.register(NS, productpage.name, 15000, { host: '127.0.0.1', port: agents[0].adminPort });
    }
  });
});

import { expect } from 'chai';
import { execFile, execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { RunningDaemon } from '../../helpers/daemon';
import { OrchWorld, runPod, startOrchDaemon, startOrchWorld } from '../../helpers/orch-mesh';
import { REPO_ROOT, runCli } from '../../helpers/run-cli';

/*
 * `meshctl bug-report` as an operator runs it: meshctl → the in-process API server (lists, pod
 * logs, port-forwards) → a real daemon registered as the mesh namespace's pod and stand-in
 * proxies with admin servers. The archive is read back with the real `tar`.
 */

describe('meshctl bug-report (through the orchestrator API)', function () {
  this.timeout(120_000);
  let world: OrchWorld;
  let daemon: RunningDaemon;
  let dir: string;
  const admins: http.Server[] = [];
  let slowAdmin: http.Server;

  const meshctl = (...args: string[]) => runCli('meshctl', ['bug-report', ...args, '--orchconfig', world.kubeconfig], { timeoutMs: 60_000 });
  /** A fresh output folder for one run. */
  const outDir = () => fs.mkdtempSync(path.join(dir, 'out-'));
  const listing = (archive: string) => execFileSync('tar', ['-tzf', archive], { encoding: 'utf8' }).trim().split('\n');
  const extract = (archive: string, file: string) => execFileSync('tar', ['-xzOf', archive, file], { encoding: 'utf8' });

  const admin = async (name: string, delayMs = 0) => {
    const server = http.createServer((req, res) => {
      const answer = () => {
        if (req.url === '/config_dump') res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ configs: [{ '@type': 'type.googleapis.com/envoy.admin.v3.BootstrapConfigDump', bootstrap: { node: { id: name } } }] }));
        else res.writeHead(404).end('no such admin path\n');
      };
      if (delayMs) setTimeout(answer, delayMs).unref();
      else answer();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    admins.push(server);
    return server;
  };
  const port = (s: http.Server) => (s.address() as AddressInfo).port;
  const proxyContainers = [
    { name: 'app', image: 'app:test' },
    { name: 'mesh-proxy', image: 'mesh/proxyv2:1.2.3', ports: [{ containerPort: 15000, protocol: 'TCP' }] },
  ];

  before(async () => {
    world = await startOrchWorld({ namespaces: ['mesh-system', 'shop', 'billing'], simulateCluster: false });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-bug-report-'));
    daemon = await startOrchDaemon(world);
    const server = world.server;
    await runPod(server, {
      name: 'meshd-5c7d9-abcde',
      namespace: 'mesh-system',
      labels: { app: 'meshd', 'app.kubernetes.io/version': '1.2.3' },
      deployment: 'meshd',
      containers: [{ name: 'discovery', image: 'mesh/meshd:1.2.3', ports: [{ containerPort: 8080, protocol: 'TCP' }] }],
      ports: { 8080: daemon.httpPort },
    });
    const web = await admin('web');
    const pay = await admin('pay');
    // Never answers within the timeout test's --timeout, however slow the machine.
    slowAdmin = await admin('slow', 30_000);
    await runPod(server, { name: 'web-1', namespace: 'shop', labels: { app: 'web' }, annotations: { team: 'frontend' }, deployment: 'web', containers: proxyContainers, ports: { 15000: port(web) } });
    await runPod(server, { name: 'pay-1', namespace: 'billing', labels: { app: 'pay' }, deployment: 'pay', containers: proxyContainers, ports: { 15000: port(pay) } });
    await runPod(server, { name: 'dns-1', namespace: 'kube-system', labels: { app: 'dns' }, containers: proxyContainers, ports: { 15000: port(web) } });
    const old = new Date(Date.now() - 3_600_000);
    server.podLogs.set('mesh-system', 'meshd-5c7d9-abcde', 'discovery', [{ at: old, text: 'info old startup line' }, 'info ads: push done', 'error ads: push failed for web-1']);
    server.podLogs.set('shop', 'web-1', 'mesh-proxy', ['info proxy ready', 'error upstream reset: connection refused', 'error TLS handshake failed: certificate expired']);
    server.podLogs.set('billing', 'pay-1', 'mesh-proxy', ['error noisy retry', 'error noisy retry', 'error noisy retry', 'error noisy retry']);
    server.podLogs.set('kube-system', 'dns-1', 'mesh-proxy', ['error should never be gathered']);
    await world.apply(
      [
        'apiVersion: v1\nkind: Secret\nmetadata:\n  name: ca-key\n  namespace: mesh-system\nstringData:\n  key.pem: TOP-SECRET-KEY\n',
        'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: mesh\n  namespace: mesh-system\ndata:\n  mesh: "defaultConfig: {}"\n',
        'apiVersion: networking.mesh.io/v1\nkind: DestinationRule\nmetadata:\n  name: web\n  namespace: shop\nspec:\n  host: web.shop.svc.cluster.local\n',
      ].join('---\n'),
    );
  });
  after(async () => {
    await Promise.all(admins.map((s) => new Promise((r) => { s.closeAllConnections(); s.close(r); })));
    await daemon?.stop();
    await world?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  describe('a full run', () => {
    let archive: string;
    let files: string[];
    let stdout: string;
    let stderr: string;
    before(async () => {
      const out = outDir();
      const r = await meshctl('--output-dir', out, '--dir', dir, '--critical-errs', '*certificate expired*', '--ignore-errs', 'noisy*');
      expect(r.code, r.stderr).to.equal(0);
      ({ stdout, stderr } = r);
      archive = path.join(out, 'bug-report.tar.gz');
      files = listing(archive);
    });

    it('writes bug-report.tar.gz and says where; plain summary lines on stderr (no terminal)', () => {
      expect(stdout).to.equal(`Wrote ${archive}\n`);
      const [planned, gathered, total] = /^Gathering (\d+) items \(1 daemon pods, 2 proxies, 3 container logs\) with up to 32 requests at once\nGathered (\d+) of (\d+) items\n$/.exec(stderr)?.slice(1) ?? [];
      expect(planned, stderr).to.match(/^\d+$/);
      expect([gathered, total]).to.deep.equal([planned, planned]);
      expect(stderr).not.to.include('\r');
    });

    it('holds versions, resources, logs, config dumps and daemon debug output', () => {
      expect(files).to.include.members([
        'bug-report/summary.yaml',
        'bug-report/versions.yaml',
        'bug-report/cluster/mesh-system/secrets.yaml',
        'bug-report/cluster/mesh-system/configmaps.yaml',
        'bug-report/cluster/mesh-system/pods.yaml',
        'bug-report/cluster/namespaces.yaml',
        'bug-report/cluster/mesh-resources.yaml',
        'bug-report/daemon/mesh-system/meshd-5c7d9-abcde/discovery.log',
        'bug-report/daemon/mesh-system/meshd-5c7d9-abcde/debug/syncz.json',
        'bug-report/daemon/mesh-system/meshd-5c7d9-abcde/debug/configz.json',
        'bug-report/daemon/mesh-system/meshd-5c7d9-abcde/debug/registryz.json',
        'bug-report/proxies/shop/web-1/mesh-proxy.log',
        'bug-report/proxies/shop/web-1/config_dump.json',
        'bug-report/proxies/billing/pay-1/mesh-proxy.log',
      ]);
      expect(files.filter((f) => f.includes('kube-system')), 'the default --exclude leaves kube-system out').to.deep.equal([]);
      const versions = parse(extract(archive, 'bug-report/versions.yaml'));
      expect(versions.orchestrator.gitVersion).to.match(/^v1\.\d+\.\d+/);
      expect(versions.mesh[0]).to.include({ pod: 'mesh-system/meshd-5c7d9-abcde' });
      expect(versions.mesh[0].images).to.deep.equal(['discovery=mesh/meshd:1.2.3']);
      expect(versions.mesh[0].debugVersion, 'the daemon answered /debug/version through the port-forward').to.be.an('object');
      expect(JSON.parse(extract(archive, 'bug-report/proxies/shop/web-1/config_dump.json')).configs[0].bootstrap.node.id).to.equal('web');
      expect(() => JSON.parse(extract(archive, 'bug-report/daemon/mesh-system/meshd-5c7d9-abcde/debug/syncz.json'))).not.to.throw();
      expect(extract(archive, 'bug-report/proxies/shop/web-1/mesh-proxy.log')).to.equal('info proxy ready\nerror upstream reset: connection refused\nerror TLS handshake failed: certificate expired\n');
      const rules = parseAllDocuments(extract(archive, 'bug-report/cluster/mesh-resources.yaml')).map((d) => d.toJS());
      expect(rules.map((r) => `${r.kind} ${r.metadata.namespace}/${r.metadata.name}`)).to.include('DestinationRule shop/web');
    });

    it('redacts secret data by default, keeping the keys', () => {
      const secrets = extract(archive, 'bug-report/cluster/mesh-system/secrets.yaml');
      expect(secrets).not.to.include('TOP-SECRET-KEY');
      expect(secrets).not.to.include(Buffer.from('TOP-SECRET-KEY').toString('base64'));
      const secret = parseAllDocuments(secrets).map((d) => d.toJS()).find((s) => s.metadata.name === 'ca-key');
      expect(secret.data).to.deep.equal({ 'key.pem': '<redacted>' });
    });

    it('ranks logs: critical errors first, ignored errors not counted', () => {
      const summary = parse(extract(archive, 'bug-report/summary.yaml'));
      expect(summary.complete).to.equal(true);
      expect(summary.logsByPriority[0]).to.deep.equal({ path: 'bug-report/proxies/shop/web-1/mesh-proxy.log', criticalErrors: 1, errors: 2 });
      expect(summary.logsByPriority.find((l: { path: string }) => l.path.includes('pay-1'))).to.include({ errors: 0 });
      const logs = files.filter((f) => f.endsWith('.log'));
      expect(logs[0], 'the archive holds the most critical log first').to.equal('bug-report/proxies/shop/web-1/mesh-proxy.log');
    });
  });

  it('--full-secrets keeps secret data', async () => {
    const out = outDir();
    const r = await meshctl('--output-dir', out, '--full-secrets', '--include', 'shop');
    expect(r.code, r.stderr).to.equal(0);
    const secrets = extract(path.join(out, 'bug-report.tar.gz'), 'bug-report/cluster/mesh-system/secrets.yaml');
    expect(secrets).to.include(Buffer.from('TOP-SECRET-KEY').toString('base64'));
  });

  it('--include and --exclude select the containers whose logs are gathered', async () => {
    const out = outDir();
    const r = await meshctl('--output-dir', out, '--include', 'shop,billing', '--exclude', '/pay', '--exclude', 'kube-system');
    expect(r.code, r.stderr).to.equal(0);
    const logs = listing(path.join(out, 'bug-report.tar.gz')).filter((f) => f.endsWith('.log') || f.endsWith('config_dump.json'));
    expect(logs.sort()).to.deep.equal(['bug-report/proxies/shop/web-1/config_dump.json', 'bug-report/proxies/shop/web-1/mesh-proxy.log']);

    const byLabel = outDir();
    const r2 = await meshctl('--output-dir', byLabel, '--include', '//*-1/app=p*', '--include', '////team=front*');
    expect(r2.code, r2.stderr).to.equal(0);
    const logs2 = listing(path.join(byLabel, 'bug-report.tar.gz')).filter((f) => f.endsWith('.log'));
    expect(logs2.sort()).to.deep.equal(['bug-report/proxies/billing/pay-1/mesh-proxy.log', 'bug-report/proxies/shop/web-1/mesh-proxy.log']);
  });

  it('--duration keeps only the recent log lines', async () => {
    const out = outDir();
    const r = await meshctl('--output-dir', out, '--include', 'mesh-system', '--duration', '10m');
    expect(r.code, r.stderr).to.equal(0);
    const log = extract(path.join(out, 'bug-report.tar.gz'), 'bug-report/daemon/mesh-system/meshd-5c7d9-abcde/discovery.log');
    expect(log).to.equal('info ads: push done\nerror ads: push failed for web-1\n');
  });

  it('a --timeout still writes what it had, and says what is missing', async () => {
    const server = world.server;
    await runPod(server, { name: 'slow-1', namespace: 'shop', labels: { app: 'slow' }, containers: proxyContainers, ports: { 15000: port(slowAdmin) } });
    try {
      const out = outDir();
      // Long enough for the quick proxy's items on a slow machine, far short of the slow one's answer.
      const r = await meshctl('--output-dir', out, '--include', 'shop', '--timeout', '5s');
      expect(r.code, r.stderr).to.equal(0);
      expect(r.stderr).to.match(/Timed out after 5s \(--timeout\): archived the \d+ of \d+ items gathered so far\n$/);
      const archive = path.join(out, 'bug-report.tar.gz');
      const files = listing(archive);
      expect(files).to.include('bug-report/proxies/shop/web-1/mesh-proxy.log');
      expect(files).not.to.include('bug-report/proxies/shop/slow-1/config_dump.json');
      const summary = parse(extract(archive, 'bug-report/summary.yaml'));
      expect(summary.complete).to.equal(false);
      expect(summary.notGathered.join('\n')).to.include('pod shop/slow-1');
    } finally {
      await server.delete('v1', 'Pod', 'shop', 'slow-1').catch(() => undefined);
    }
  });

  it('a proxy that cannot be reached is listed in summary.yaml; the rest is archived', async () => {
    const server = world.server;
    await runPod(server, { name: 'broken-1', namespace: 'shop', labels: { app: 'broken' }, containers: proxyContainers });
    try {
      const out = outDir();
      const r = await meshctl('--output-dir', out, '--include', 'shop');
      expect(r.code, r.stderr).to.equal(0);
      expect(r.stderr).to.match(/\nGathered (\d+) of \d+ items; 1 failed \(listed in bug-report\/summary.yaml\)\n$/);
      const archive = path.join(out, 'bug-report.tar.gz');
      const summary = parse(extract(archive, 'bug-report/summary.yaml'));
      expect(summary.complete).to.equal(false);
      expect(summary.errors).to.have.length(1);
      expect(summary.errors[0]).to.match(/^the config dump of the proxy admin \(port 15000\) of pod shop\/broken-1: .*broken-1/);
      expect(listing(archive)).to.include.members(['bug-report/proxies/shop/broken-1/mesh-proxy.log', 'bug-report/proxies/shop/web-1/config_dump.json']);
    } finally {
      await server.delete('v1', 'Pod', 'shop', 'broken-1').catch(() => undefined);
    }
  });

  it('on a terminal shows a spinner with how far it got, cleared before each summary line', async () => {
    const out = outDir();
    const command = [process.execPath, path.join(REPO_ROOT, 'bin', 'meshctl'), 'bug-report', '--include', 'shop', '--output-dir', out, '--orchconfig', world.kubeconfig].map((a) => `'${a}'`).join(' ');
    // `script` gives the command a pseudo-terminal, as a user's shell would.
    const r = await new Promise<{ code: number | null; text: string }>((resolve) => {
      execFile('script', ['-qec', command, '/dev/null'], { timeout: 60_000, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', TERM: 'xterm' } }, (err, stdout) =>
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, text: stdout }),
      );
    });
    expect(r.code, r.text).to.equal(0);
    expect(r.text).to.match(/\r\x1b\[2K[|/\\-] bug-report: gathered \d+\/\d+/);
    expect(r.text).to.match(/\r\x1b\[2KGathering \d+ items/);
    expect(r.text).to.include(`Wrote ${path.join(out, 'bug-report.tar.gz')}`);
    expect(fs.existsSync(path.join(out, 'bug-report.tar.gz'))).to.equal(true);
  });

  it('--dry-run lists what it would gather and writes nothing', async () => {
    const out = outDir();
    const stage = fs.mkdtempSync(path.join(dir, 'stage-'));
    const r = await meshctl('--output-dir', out, '--dir', stage, '--dry-run');
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.include('would gather the log of mesh-proxy of pod shop/web-1 into bug-report/proxies/shop/web-1/mesh-proxy.log\n');
    expect(r.stdout).to.include(`would write ${path.join(out, 'bug-report.tar.gz')}\n`);
    expect(fs.readdirSync(out)).to.deep.equal([]);
    expect(fs.readdirSync(stage)).to.deep.equal([]);
  });

  it('a -f config file replaces flag values (lists replaced, not appended)', async () => {
    const out = outDir();
    const file = path.join(dir, 'report.yaml');
    fs.writeFileSync(file, `include:\n  - billing\noutput-dir: ${out}\n`);
    const r = await meshctl('-f', file, '--include', 'shop');
    expect(r.code, r.stderr).to.equal(0);
    const logs = listing(path.join(out, 'bug-report.tar.gz')).filter((f) => f.endsWith('.log'));
    expect(logs).to.deep.equal(['bug-report/proxies/billing/pay-1/mesh-proxy.log']);
  });

  it('bad filters, times and config files fail with one clear line before reaching the cluster', async () => {
    const cases: [string[], string][] = [
      [['--include', 'a/b/c/d/e/f/g'], '--include filter "a/b/c/d/e/f/g": has 7 parts; the form is namespaces/deployments/pods/labels/annotations/containers'],
      [['--exclude', 'ns//pod/app'], '--exclude filter "ns//pod/app": label "app" is not key=value'],
      [['--include', 'ns,,other'], '--include filter "ns,,other": empty namespace name in "ns,,other"'],
      [['--include', '///a*b=c'], '--include filter "///a*b=c": label key "a*b" may only have letters, digits, \'.\', \'-\' and \'_\' (no \'*\')'],
      [['--start-time', '2024-01-01T00:00:00Z', '--duration', '5m'], '--start-time and --duration cannot be used together'],
      [['--end-time', 'yesterday'], '--end-time "yesterday" is not an RFC 3339 time such as 2024-01-02T15:04:05Z'],
    ];
    const aliasFile = path.join(dir, 'bad.yaml');
    fs.writeFileSync(aliasFile, 'a: &a [*a]\n');
    const typeFile = path.join(dir, 'bad-type.yaml');
    fs.writeFileSync(typeFile, 'include: shop\n');
    // Independent runs that each stop before the cluster: at once rather than one after another.
    const [results, alias, wrongType] = await Promise.all([Promise.all(cases.map(([args]) => meshctl(...args))), meshctl('-f', aliasFile), meshctl('-f', typeFile)]);
    cases.forEach(([args, message], i) => {
      expect(results[i].stderr, args.join(' ')).to.equal(`Error: ${message}\n`);
      expect(results[i].code).to.equal(1);
    });
    expect(alias.code).to.equal(1);
    expect(alias.stderr).to.match(new RegExp(`^Error: config file ${aliasFile}`));
    expect(wrongType.stderr).to.equal(`Error: config file ${typeFile}: include must be a list of strings\n`);
  });
});

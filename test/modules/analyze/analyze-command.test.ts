import { expect } from 'chai';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { parse } from 'yaml';
import { startOrchWorld, OrchWorld } from '../../helpers/orch-mesh';
import { runCli } from '../../helpers/run-cli';

/** `meshctl analyze` as a user runs it: thresholds and exit codes, suppression, listing, output forms, bad input, the live cluster. */

const GATEWAY_NO_WORKLOAD = `apiVersion: networking.mesh.io/v1
kind: Gateway
metadata:
  name: lonely
  namespace: default
spec:
  selector:
    mesh: nothing-has-this
  servers:
  - port: {number: 80, name: http, protocol: HTTP}
    hosts: ["*"]
`;

const SERVICE_UNNAMED_PORT = `apiVersion: v1
kind: Service
metadata:
  name: plain
  namespace: default
spec:
  selector: {app: plain}
  ports:
  - port: 8080
`;

describe('meshctl analyze', function () {
  this.timeout(60_000);
  let dir: string;
  const file = (name: string, text: string) => {
    const p = path.join(dir, name);
    fs.writeFileSync(p, text);
    return p;
  };
  const analyze = (...args: string[]) => runCli('meshctl', ['analyze', ...args], { timeoutMs: 30_000 });

  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-analyze-'));
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('exits 79 when a message reaches the failure threshold, naming the resource, file and line in the log form', async () => {
    const gw = file('gw.yaml', GATEWAY_NO_WORKLOAD);
    const r = await analyze('--use-orch=false', '--analyzer', 'gateway.IngressGatewayPortAnalyzer', gw);
    expect(r.code).to.equal(79);
    expect(r.stdout).to.equal(`Error [MSH0101] (Gateway default/lonely ${gw}:8) Referenced selector not found: "mesh=nothing-has-this"\n`);
    expect(r.stderr).to.include('Analyzers found issues when analyzing namespace: default.');
  });

  it('exits zero below the failure threshold and shows only what reaches the output threshold', async () => {
    const svc = file('svc.yaml', SERVICE_UNNAMED_PORT);
    const info = await analyze('--use-orch=false', svc);
    expect(info.code).to.equal(0);
    expect(info.stdout).to.match(/^Info \[MSH0118\] \(Service default\/plain .*svc\.yaml:\d+\) Port name {2}\(port: 8080, targetPort: 0\)/);
    const failing = await analyze('--use-orch=false', '--failure-threshold', 'Info', svc);
    expect(failing.code).to.equal(79);
    const hidden = await analyze('--use-orch=false', '--output-threshold', 'Warning', svc);
    expect(hidden.code).to.equal(0);
    expect(hidden.stdout).to.equal('');
    expect(hidden.stderr).to.include('\u2714 No validation issues found when analyzing namespace: default.');
  });

  it('suppresses by <code>=<resource> with * wildcards, which also clears the failure', async () => {
    const gw = file('gw2.yaml', GATEWAY_NO_WORKLOAD);
    const exact = await analyze('--use-orch=false', '-S', 'MSH0101=Gateway default/lonely', gw);
    expect(exact.code).to.equal(0);
    expect(exact.stdout).to.equal('');
    const wild = await analyze('--use-orch=false', '--suppress', 'MSH01*=Gateway *', gw);
    expect(wild.code).to.equal(0);
    const other = await analyze('--use-orch=false', '-S', 'MSH0101=Gateway default/other', gw);
    expect(other.code).to.equal(79);
    const bad = await analyze('--use-orch=false', '-S', 'MSH0101', gw);
    expect(bad.code).to.not.equal(0);
    expect(bad.stderr).to.include('expected <code>=<resource>');
  });

  it('prints json and yaml lists with code, level, origin, message and documentationUrl', async () => {
    const gw = file('gw3.yaml', GATEWAY_NO_WORKLOAD);
    const json = await analyze('--use-orch=false', '--analyzer', 'gateway.IngressGatewayPortAnalyzer', '-o', 'json', gw);
    expect(json.code).to.equal(79);
    const list = JSON.parse(json.stdout) as Array<Record<string, string>>;
    expect(list).to.have.length(1);
    expect(list[0]).to.include({ code: 'MSH0101', level: 'Error', origin: 'Gateway default/lonely', message: 'Referenced selector not found: "mesh=nothing-has-this"' });
    expect(list[0].documentationUrl).to.match(/msh0101/);
    const yaml = await analyze('--use-orch=false', '--analyzer', 'gateway.IngressGatewayPortAnalyzer', '-o', 'yaml', gw);
    expect(parse(yaml.stdout)).to.deep.equal(list);
    const none = await analyze('--use-orch=false', '-o', 'json', file('empty.yaml', SERVICE_UNNAMED_PORT.replace('- port: 8080', '- port: 8080\n    name: http')));
    expect(JSON.parse(none.stdout)).to.deep.equal([]);
  });

  it('lists the analyzers with -L and runs only those --analyzer names', async () => {
    const list = await analyze('-L');
    expect(list.code).to.equal(0);
    expect(list.stdout).to.include('* gateway.IngressGatewayPortAnalyzer:').and.include('* schema.ValidationAnalyzer.VirtualService:');
    const gw = file('gw4.yaml', GATEWAY_NO_WORKLOAD);
    const only = await analyze('--use-orch=false', '--analyzer', 'service.PortNameAnalyzer', gw);
    expect(only.code).to.equal(0);
    const unknown = await analyze('--use-orch=false', '--analyzer', 'nope.Analyzer', gw);
    expect(unknown.code).to.equal(1);
    expect(unknown.stderr).to.include('unknown analyzer "nope.Analyzer"');
  });

  it('names a file that cannot be parsed with its line, and skips it with --ignore-unknown; skips kinds nothing reads, saying so', async () => {
    const bad = file('bad.yaml', 'apiVersion: v1\nkind: Service\nmetadata:\n  name: [unclosed\n');
    const gw = file('gw5.yaml', GATEWAY_NO_WORKLOAD);
    const r = await analyze('--use-orch=false', bad, gw);
    expect(r.code).to.equal(65);
    expect(r.stderr).to.match(new RegExp(`${bad.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:\\d+`));
    const odd = file('odd.yaml', 'apiVersion: example.com/v1\nkind: Frobnicator\nmetadata:\n  name: x\n');
    // A kind nothing reads is skipped, and said (another product's, or one the mesh dropped).
    const unknown = await analyze('--use-orch=false', odd);
    expect(unknown.code, unknown.stderr).to.equal(0);
    expect(unknown.stderr).to.include(`Skipped ${odd}:1: unknown kind Frobnicator (example.com/v1) of x\n`);
    const skipped = await analyze('--use-orch=false', '--ignore-unknown', bad, odd, gw);
    expect(skipped.code).to.equal(79);
    expect(skipped.stdout).to.include('Gateway default/lonely');
  });

  it('rejects YAML alias bombs with a clear error instead of hanging', async () => {
    const bomb = ['a: &a ["x","x","x","x","x","x","x","x","x"]'];
    for (let i = 0; i < 12; i++) bomb.push(`${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [${Array(9).fill(`*${String.fromCharCode(97 + i)}`).join(',')}]`);
    const r = await analyze('--use-orch=false', file('bomb.yaml', `${bomb.join('\n')}\n`));
    expect(r.code).to.equal(65);
    expect(r.stderr).to.include('bomb.yaml');
  });

  it('applies --meshConfigFile and fails on a missing one', async () => {
    const missing = await analyze('--use-orch=false', '--meshConfigFile', path.join(dir, 'nope.yaml'), file('gw6.yaml', GATEWAY_NO_WORKLOAD));
    expect(missing.code).to.equal(1);
    expect(missing.stderr).to.include('--meshConfigFile');
  });

  describe('against the live cluster', () => {
    let world: OrchWorld;
    before(async () => {
      world = await startOrchWorld({ namespaces: ['shop', 'other'] });
      await world.apply(`apiVersion: networking.mesh.io/v1
kind: VirtualService
metadata:
  name: routes
  namespace: shop
spec:
  hosts: [shop.example.com]
  gateways: [missing-gw]
  http:
  - route:
    - destination: {host: cart}
---
apiVersion: networking.mesh.io/v1
kind: VirtualService
metadata:
  name: elsewhere
  namespace: other
spec:
  hosts: [other.example.com]
  gateways: [missing-too]
  http:
  - route:
    - destination: {host: cart}
`);
    });
    after(async () => world?.close());

    const live = (...args: string[]) => analyze('--orchconfig', world.kubeconfig, '--analyzer', 'virtualservice.GatewayAnalyzer', '-o', 'json', ...args);

    it('reads the cluster, shows the namespace asked for, all of them with -A, and overlays files', async () => {
      const shop = await live('-n', 'shop');
      expect(shop.code, shop.stderr).to.equal(79);
      const origins = (JSON.parse(shop.stdout) as Array<{ origin: string }>).map((m) => m.origin);
      expect(origins).to.include('VirtualService shop/routes').and.not.include('VirtualService other/elsewhere');
      const all = await live('-A');
      expect((JSON.parse(all.stdout) as Array<{ origin: string }>).map((m) => m.origin)).to.include('VirtualService other/elsewhere');
      const gw = file('live-gw.yaml', `apiVersion: networking.mesh.io/v1
kind: Gateway
metadata:
  name: missing-gw
spec:
  selector: {mesh: ingressgateway}
  servers:
  - port: {number: 80, name: http, protocol: HTTP}
    hosts: ["shop.example.com"]
`);
      const fixed = await live('-n', 'shop', gw);
      expect(fixed.code, fixed.stderr).to.equal(0);
      expect(JSON.parse(fixed.stdout)).to.deep.equal([]);
    });

    it('fails within --timeout when the cluster does not answer', async () => {
      // Accepts connections and never answers: the TLS handshake waits forever.
      const sockets: net.Socket[] = [];
      const silent = net.createServer((s) => sockets.push(s));
      await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
      try {
        const { port } = silent.address() as net.AddressInfo;
        const dead = file('dead-kubeconfig', fs.readFileSync(world.kubeconfig, 'utf8').replace(/server: .*/, `server: https://127.0.0.1:${port}`));
        const r = await runCli('meshctl', ['analyze', '--orchconfig', dead, '--timeout', '1s'], { timeoutMs: 20_000 });
        expect(r.code).to.not.equal(0);
        expect(r.stderr).to.include('did not finish within 1s');
      } finally {
        for (const s of sockets) s.destroy();
        await new Promise((resolve) => silent.close(resolve));
      }
    });
  });
});

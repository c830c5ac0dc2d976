/**
 * `meshctl x authz simulate` as a user runs it: config from the cluster (the test API server,
 * through the orchestrator client), from files, or files over the cluster; tokens checked
 * against a key set file or claims signed by the simulator; the requests table and its exit
 * code; usage errors (exit 2) naming the flag, file or field.
 */
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { OrchWorld, startOrchWorld } from '../../helpers/orch-mesh';
import { runCli } from '../../helpers/run-cli';
import { signingKey, token } from '../../helpers/jwt';
import { runningPod } from '../diagnose/support';

const ISS = 'https://issuer.example.com';

const CLUSTER_CONFIG = `apiVersion: v1
kind: ConfigMap
metadata: { name: mesh, namespace: mesh-system }
data:
  mesh: |
    trustDomain: td.example
---
apiVersion: security.mesh.io/v1
kind: AuthorizationPolicy
metadata: { name: allow-web, namespace: foo }
spec:
  selector: { matchLabels: { app: httpbin } }
  # cluster.local stands for the mesh's trust domain: td.example, once the generators read the ConfigMap.
  rules: [{ from: [{ source: { principals: ["cluster.local/ns/shop/sa/web"] } }] }]
`;

const OVERLAY = `apiVersion: security.mesh.io/v1
kind: AuthorizationPolicy
metadata: { name: deny-secret, namespace: foo }
spec:
  selector: { matchLabels: { app: httpbin } }
  action: DENY
  rules: [{ to: [{ operation: { paths: ["/secret"] } }] }]
`;

const FILES = `apiVersion: networking.mesh.io/v1
kind: ServiceEntry
metadata: { name: httpbin, namespace: foo }
spec:
  hosts: [httpbin.foo.svc.cluster.local]
  location: MESH_INTERNAL
  resolution: STATIC
  ports: [{ number: 8000, name: http, protocol: HTTP, targetPort: 9000 }]
  workloadSelector: { labels: { app: httpbin } }
---
apiVersion: networking.mesh.io/v1
kind: WorkloadEntry
metadata: { name: httpbin-v1, namespace: foo }
spec: { address: 10.0.0.5, labels: { app: httpbin } }
---
apiVersion: security.mesh.io/v1
kind: RequestAuthentication
metadata: { name: jwt, namespace: foo }
spec:
  jwtRules: [{ issuer: "${ISS}", jwksUri: "http://127.0.0.1:1/unreachable.json" }]
---
apiVersion: security.mesh.io/v1
kind: AuthorizationPolicy
metadata: { name: allow-admins, namespace: foo }
spec:
  selector: { matchLabels: { app: httpbin } }
  rules:
  - from: [{ source: { requestPrincipals: ["${ISS}/*"] } }]
    when: [{ key: "request.auth.claims[groups]", values: ["admins"] }]
`;

describe('meshctl x authz simulate: flags, sources, output and exit codes', function () {
  this.timeout(60_000);
  let world: OrchWorld;
  let dir: string;
  const file = (name: string, text: string) => {
    const p = path.join(dir, name);
    fs.writeFileSync(p, text);
    return p;
  };

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-sim-cmd-'));
    world = await startOrchWorld({ simulateCluster: false, namespaces: ['foo', 'shop', 'mesh-system'] });
    await world.apply(CLUSTER_CONFIG);
    const s = world.server;
    await s.create({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'httpbin', namespace: 'foo' }, spec: { selector: { app: 'httpbin' }, ports: [{ name: 'http', port: 8000, targetPort: 9000, protocol: 'TCP' }] } });
    await runningPod(s, { metadata: { name: 'httpbin-1', namespace: 'foo', labels: { app: 'httpbin' } }, spec: { containers: [{ name: 'app', image: 'httpbin' }] } }, { podIP: '10.244.0.10' });
    await runningPod(s, { metadata: { name: 'web-1', namespace: 'shop', labels: { app: 'web' } }, spec: { serviceAccountName: 'web', containers: [{ name: 'app', image: 'web' }] } }, { podIP: '10.244.0.20' });
  });

  after(async () => {
    await world?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('reads the cluster: the pod and its Service, the mesh config trust domain, a --from pod as the mutual TLS peer (json)', async () => {
    const r = await runCli('meshctl', ['x', 'authz', 'sim', '--to', 'httpbin-1.foo', '--from', 'web-1.shop', '--path', '/x', '-o', 'json', '--orchconfig', world.kubeconfig]);
    expect(r.code, r.stderr).to.equal(0);
    const answer = JSON.parse(r.stdout);
    expect(answer.destination).to.deep.equal({ workload: 'Pod foo/httpbin-1', port: 8000 });
    expect(answer.source).to.deep.equal({ principal: 'spiffe://td.example/ns/shop/sa/web', ip: '10.244.0.20' });
    expect(answer).to.include({ status: 200, decision: 'allowed' });
    expect(answer.matched).to.deep.equal({ rule: 'allow-web.foo rule 0', action: 'ALLOW' });
  });

  it('overlays files on the cluster (--cluster -f): a pending DENY decides, and a denial exits 1 with one line', async () => {
    const r = await runCli('meshctl', [
      'x', 'authz', 'simulate', '--cluster', '-f', file('overlay.yaml', OVERLAY), '--to-labels', 'app=httpbin', '-n', 'foo', '--from', 'web-1.shop', '--path', '/secret',
      '--orchconfig', world.kubeconfig,
    ]);
    expect(r.code).to.equal(1);
    expect(r.stdout).to.match(/^403 DENIED: DENY rule deny-secret\.foo rule 0 matched\n/);
    expect(r.stdout).to.contain('  decided by: deny-secret.foo rule 0 (DENY)');
    expect(r.stdout, 'denied before the ALLOW filter runs').to.not.contain('allow-web');
    expect(r.stderr.trim()).to.equal('Error: the request would not be let through: 403 denied');
  });

  it('runs a requests file from files only: --jwks tokens, unverified claims, 401 reasons, failed expectations in the table (exit 1)', async () => {
    const key = await signingKey('k1', 'RS256');
    const jwks = file('jwks.json', JSON.stringify({ keys: [key.jwk] }));
    const unknown = await signingKey('k2', 'RS256');
    const requests = file(
      'requests.yaml',
      [
        `- { name: admin, token: "${await token(key, { iss: ISS, sub: 'ann', claims: { groups: ['admins'] } })}", expect: { status: 200, rule: "allow-admins.foo rule 0" } }`,
        `- { name: claims, claims: { sub: bob, groups: [admins] }, issuer: "${ISS}", expect: 200 }`,
        `- { name: expired, token: "${await token(key, { iss: ISS, sub: 'ann', expiresIn: -600 })}", expect: 401 }`,
        `- { name: unknown-key, token: "${await token(unknown, { iss: ISS, sub: 'ann' })}", expect: 401 }`,
        `- { name: wrong-expectation, path: /x, expect: 200 }`,
      ].join('\n'),
    );
    const base = ['x', 'authz', 'sim', '-f', file('mesh.yaml', FILES), '--to-labels', 'app=httpbin', '-n', 'foo', '--jwks', jwks, '--requests', requests];
    const table = await runCli('meshctl', base);
    expect(table.code, table.stderr).to.equal(1);
    const lines = table.stdout.trim().split('\n');
    expect(lines[0]).to.match(/^#\s+NAME\s+REQUEST\s+EXPECTED\s+GOT\s+RULE\s+RESULT$/);
    expect(lines[1]).to.match(/^1\s+admin\s+GET \/\s+200 allow-admins\.foo rule 0\s+200\s+allow-admins\.foo rule 0 \(ALLOW\)\s+ok$/);
    expect(lines[2]).to.match(/^2\s+claims .* 200\s+200 .* ok$/);
    expect(lines[3]).to.match(/^3\s+expired .* 401\s+401\s+none\s+ok$/);
    expect(lines[4]).to.match(/^4\s+unknown-key .* 401\s+401\s+none\s+ok$/);
    expect(lines[5]).to.match(/^5\s+wrong-expectation\s+GET \/x\s+200\s+403\s+none\s+FAIL$/);
    expect(lines[6]).to.equal('5 requests, 5 with expectations, 1 failed');
    expect(table.stderr).to.contain('1 of 5 requests did not get the expected answer');

    const yaml = await runCli('meshctl', [...base, '-o', 'yaml']);
    expect(yaml.stdout).to.match(/name: claims[\s\S]*?verified: false/);
    expect(yaml.stdout).to.match(/name: expired[\s\S]*?reason: expired\n[\s\S]*?status: 401/);
    expect(yaml.stdout).to.match(/name: unknown-key[\s\S]*?status: JwksKidAlgMismatch/);
  });

  it("runs the README's worked example: the sample policies pass their requests file (exit 0)", async () => {
    const r = await runCli('meshctl', [
      'x', 'authz', 'sim', '-f', 'samples/authz-simulate', '--to', 'httpbin-v1.foo', '--jwks', 'samples/authz-simulate-tests/jwks.json', '--requests', 'samples/authz-simulate-tests/requests.yaml',
    ]);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.contain('4  admin-path-denied     GET /admin/users    403 deny-admin.foo rule 0  403  deny-admin.foo rule 0 (DENY)  ok');
    expect(r.stdout.trim().split('\n').pop()).to.equal('5 requests, 5 with expectations, 0 failed');
  });

  it('refuses misuse with exit 2 and one line naming the flag, file or field', async () => {
    const aliases = file('aliases.yaml', '- &a { path: /x }\n- *a\n');
    const unknownField = file('unknown.yaml', '- { to: httpbin-v1.foo, pathh: /x }\n');
    const mesh = file('mesh2.yaml', FILES);
    const cases: [string[], RegExp][] = [
      [['-f', mesh], /^Error: request: no destination: give --to <pod>\[\.<namespace>\] or --to-labels with -n$/],
      [['-f', mesh, '--requests', aliases, '--to', 'httpbin-v1.foo'], new RegExp(`^Error: --requests ${aliases}: not YAML: .*alias`, 'i')],
      [['-f', mesh, '--requests', unknownField], new RegExp(`^Error: ${unknownField}\\[0\\]\\.pathh: unknown field`)],
      [['-f', mesh, '--to', 'httpbin-v1.foo', '--port', '9999'], /^Error: request: WorkloadEntry foo\/httpbin-v1 has no inbound port 9999; its ports are 8000$/],
    ];
    const results = await Promise.all(cases.map(([args]) => runCli('meshctl', ['x', 'authz', 'sim', ...args])));
    results.forEach((r, i) => {
      expect(r.code, `${cases[i][0].join(' ')}: ${r.stderr}`).to.equal(2);
      expect(r.stderr.trim().split('\n').pop(), cases[i][0].join(' ')).to.match(cases[i][1]);
    });
  });
});

import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { expect } from 'chai';
import { parseAllDocuments, stringify } from 'yaml';
import { crdManifests, KINDS, KindRegistry, validateDocument } from '../../../src/modules/config';
import { OrchApiServer, startOrchApiServer } from '../../helpers/orch-api';

const ROOT = path.resolve(__dirname, '..', '..', '..', '..');
const CRD_DIR = path.join(ROOT, 'manifests', 'crds');

/** One valid resource of each kind, as a user would apply it. */
const SAMPLES: object[] = [
  {
    apiVersion: 'security.mesh.io/v1',
    kind: 'RequestAuthentication',
    metadata: { name: 'jwt', namespace: 'shop' },
    spec: { selector: { matchLabels: { app: 'cart' } }, jwtRules: [{ issuer: 'https://issuer.example.com', jwksUri: 'https://issuer.example.com/jwks', forwardOriginalToken: true }] },
  },
  {
    apiVersion: 'security.mesh.io/v1',
    kind: 'AuthorizationPolicy',
    metadata: { name: 'require-jwt', namespace: 'shop' },
    spec: {
      selector: { matchLabels: { app: 'cart' } },
      action: 'ALLOW',
      rules: [{ from: [{ source: { requestPrincipals: ['https://issuer.example.com/alice'] } }], when: [{ key: 'request.auth.claims[groups]', values: ['admin'] }] }],
    },
  },
  {
    apiVersion: 'security.mesh.io/v1beta1',
    kind: 'PeerAuthentication',
    metadata: { name: 'strict', namespace: 'shop' },
    spec: { selector: { matchLabels: { app: 'cart' } }, mtls: { mode: 'STRICT' }, portLevelMtls: { '8080': { mode: 'PERMISSIVE' } } },
  },
  {
    apiVersion: 'networking.mesh.io/v1',
    kind: 'VirtualService',
    metadata: { name: 'cart', namespace: 'shop' },
    spec: {
      hosts: ['cart.shop.svc.cluster.local'],
      http: [{ match: [{ headers: { 'x-canary': { exact: 'yes' } } }], route: [{ destination: { host: 'cart.shop.svc.cluster.local', subset: 'v2', port: { number: 80 } }, weight: 100 }], timeout: '5s' }],
    },
  },
  {
    apiVersion: 'networking.mesh.io/v1alpha3',
    kind: 'DestinationRule',
    metadata: { name: 'cart', namespace: 'shop' },
    spec: { host: 'cart.shop.svc.cluster.local', trafficPolicy: { connectionPool: { tcp: { maxConnections: 10, connectTimeout: '1s' } } }, subsets: [{ name: 'v2', labels: { version: 'v2' } }] },
  },
  {
    apiVersion: 'networking.mesh.io/v1',
    kind: 'ServiceEntry',
    metadata: { name: 'payments', namespace: 'shop' },
    spec: { hosts: ['payments.example.com'], location: 'MESH_EXTERNAL', resolution: 'DNS', ports: [{ number: 443, name: 'https', protocol: 'HTTPS' }] },
  },
  {
    apiVersion: 'networking.mesh.io/v1',
    kind: 'WorkloadEntry',
    metadata: { name: 'vm-1', namespace: 'shop' },
    spec: { address: '10.0.0.9', labels: { app: 'cart' }, ports: { http: 8080 }, serviceAccount: 'cart', weight: 3 },
  },
  {
    apiVersion: 'networking.mesh.io/v1beta1',
    kind: 'WorkloadGroup',
    metadata: { name: 'vms', namespace: 'shop' },
    spec: { metadata: { labels: { app: 'cart' } }, template: { serviceAccount: 'cart', ports: { http: 8080 } }, probe: { httpGet: { path: '/ready', port: 8080 }, periodSeconds: 5 } },
  },
  {
    apiVersion: 'networking.mesh.io/v1',
    kind: 'Sidecar',
    metadata: { name: 'default', namespace: 'shop' },
    spec: { egress: [{ hosts: ['./*', 'mesh-system/*'] }], outboundTrafficPolicy: { mode: 'REGISTRY_ONLY' } },
  },
  {
    apiVersion: 'networking.mesh.io/v1',
    kind: 'Gateway',
    metadata: { name: 'ingress', namespace: 'shop' },
    spec: { selector: { app: 'ingressgateway' }, servers: [{ port: { number: 80, name: 'http', protocol: 'HTTP' }, hosts: ['*.example.com'] }] },
  },
];

function kubectl(kubeconfig: string, args: string[], input?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile('kubectl', ['--kubeconfig', kubeconfig, ...args], { timeout: 20_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
    if (input !== undefined) child.stdin!.end(input);
  });
}

describe('CustomResourceDefinitions (manifests/crds)', function () {
  this.timeout(60_000);

  it('are what the spec classes generate (run scripts/generate-crds.js after changing a kind)', () => {
    const generated = crdManifests(KINDS);
    const onDisk = fs.readdirSync(CRD_DIR).filter((f) => f.endsWith('.yaml')).sort();
    expect(onDisk).to.deep.equal([...generated.keys()].sort());
    for (const [file, text] of generated) expect(fs.readFileSync(path.join(CRD_DIR, file), 'utf8'), file).to.equal(text);
  });

  it('define every kind with all its versions (v1 stored), a status subresource, short names and categories', () => {
    const crds = fs
      .readdirSync(CRD_DIR)
      .filter((f) => f.endsWith('.yaml'))
      .flatMap((f) => parseAllDocuments(fs.readFileSync(path.join(CRD_DIR, f), 'utf8')).map((d) => d.toJS()))
      .filter(Boolean);
    expect(crds.map((c) => c.spec.names.kind).sort()).to.deep.equal(KINDS.map((k) => k.kind).sort());
    for (const def of KINDS) {
      const crd = crds.find((c) => c.spec.names.kind === def.kind);
      expect(crd.spec.group).to.equal(def.group);
      expect(crd.spec.versions.map((v: { name: string }) => v.name)).to.deep.equal([...def.versions]);
      expect(crd.spec.versions.filter((v: { storage: boolean }) => v.storage).map((v: { name: string }) => v.name)).to.deep.equal(['v1']);
      for (const v of crd.spec.versions) expect(v.subresources).to.deep.equal({ status: {} });
      expect(crd.spec.names.categories).to.deep.equal(['mesh-io', def.group.replace(/\./g, '-')]);
    }
    const short = Object.fromEntries(crds.map((c) => [c.spec.names.kind, c.spec.names.shortNames ?? []]));
    expect(short).to.deep.include({ VirtualService: ['vs'], DestinationRule: ['dr'], ServiceEntry: ['se'], AuthorizationPolicy: ['ap'], RequestAuthentication: ['ra'] });
  });

  describe('applied with kubectl to the API server', () => {
    let server: OrchApiServer;
    let dir: string;
    let kubeconfig: string;

    before(async () => {
      server = await startOrchApiServer({ simulateCluster: false });
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-crds-'));
      kubeconfig = server.writeKubeconfigFile(dir);
      const created = await kubectl(kubeconfig, ['apply', '-f', '-'], 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: shop\n');
      expect(created.code, created.stderr).to.equal(0);
    });

    after(async () => {
      await server.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    it('installs with kubectl apply -f manifests/crds/, then one resource of each kind applies and reads back', async () => {
      const installed = await kubectl(kubeconfig, ['apply', '-f', CRD_DIR]);
      expect(installed.code, installed.stderr).to.equal(0);
      for (const def of KINDS) expect(installed.stdout).to.match(new RegExp(`customresourcedefinition.apiextensions.k8s.io/\\S+\\.${def.group.replace(/\./g, '\\.')} created`));
      // The samples are valid for the daemon too: both sides agree.
      const kinds = new KindRegistry(KINDS);
      for (const sample of SAMPLES) expect(validateDocument(sample, kinds).ok, JSON.stringify(sample)).to.equal(true);

      // YAML 1.1 as kubectl reads it ("yes" unquoted would be a boolean there).
      const applied = await kubectl(kubeconfig, ['apply', '-f', '-'], SAMPLES.map((s) => `---\n${stringify(s, { version: '1.1' })}`).join(''));
      expect(applied.code, applied.stderr).to.equal(0);
      expect(applied.stdout.trim().split('\n')).to.have.length(SAMPLES.length);

      const all = await kubectl(kubeconfig, ['get', 'mesh-io', '-n', 'shop', '-o', 'name']);
      expect(all.code, all.stderr).to.equal(0);
      expect(all.stdout.trim().split('\n')).to.have.length(SAMPLES.length);
      const vs = await kubectl(kubeconfig, ['get', 'vs', 'cart', '-n', 'shop', '-o', 'json']);
      expect(vs.code, vs.stderr).to.equal(0);
      // Stored at v1, read at the served version asked for (here the preferred one), spec intact.
      const read = JSON.parse(vs.stdout);
      expect(read.spec).to.deep.equal((SAMPLES[3] as { spec: object }).spec);
      const old = await kubectl(kubeconfig, ['get', 'destinationrules.v1alpha3.networking.mesh.io', 'cart', '-n', 'shop', '-o', 'jsonpath={.apiVersion} {.spec.host}']);
      expect(old.stdout).to.equal('networking.mesh.io/v1alpha3 cart.shop.svc.cluster.local');
    });

    it('rejects what the schema forbids: a wrong type, a value outside its enumeration, an unknown field', async () => {
      const bad = (spec: object) =>
        stringify({ apiVersion: 'networking.mesh.io/v1', kind: 'ServiceEntry', metadata: { name: 'bad', namespace: 'shop' }, spec });
      const wrongType = await kubectl(kubeconfig, ['apply', '-f', '-'], bad({ hosts: ['a.example.com'], ports: [{ number: 'eighty', name: 'http' }] }));
      expect(wrongType.code).to.not.equal(0);
      expect(wrongType.stderr).to.match(/spec\.ports\[0\]\.number/);
      const notInEnum = await kubectl(kubeconfig, ['apply', '-f', '-'], bad({ hosts: ['a.example.com'], resolution: 'SOMETIMES' }));
      expect(notInEnum.code).to.not.equal(0);
      expect(notInEnum.stderr).to.match(/spec\.resolution/);
      const unknown = await kubectl(kubeconfig, ['apply', '-f', '-'], bad({ hosts: ['a.example.com'], colour: 'blue' }));
      expect(unknown.code).to.not.equal(0);
      expect(unknown.stderr).to.match(/colour/);
    });
  });
});

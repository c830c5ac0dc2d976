/**
 * `meshctl x workload group create` and `x workload entry configure` end to end: the group YAML
 * is applied with kubectl; the files written for a VM of the group (mesh config, cluster.env,
 * root certificate, TokenRequest token, hosts) let a `pilot-agent proxy` started outside the
 * orchestrator get its certificate from a secure daemon (which checks the token with the API
 * server's keys), its config over mutual TLS, and register itself as a WorkloadEntry.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { expect } from 'chai';
import { parse } from 'yaml';
import { RunningDaemon } from '../../helpers/daemon';
import { OrchWorld, kubectl, orchTokenJwtRule, startOrchDaemon, startOrchWorld, waitFor } from '../../helpers/orch-mesh';
import { RunningProgram, startProgram } from '../../helpers/program';
import { runCli } from '../../helpers/run-cli';
import { usesSharedLoopbackNetwork } from '../../helpers/shared-network';

usesSharedLoopbackNetwork();

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;

function jwtClaims(token: string): Any {
  return JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString('utf8'));
}

/** cluster.env as a shell would source it (values single-quoted). */
function sourceEnv(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of text.trim().split('\n')) {
    const m = /^([A-Z_]+)='(.*)'$/.exec(line);
    expect(m, line).to.not.equal(null);
    env[m![1]] = m![2].replace(/'\\''/g, "'");
  }
  return env;
}

describe('meshctl x workload group create / entry configure (end to end)', function () {
  this.timeout(120_000);
  let world: OrchWorld;
  let daemon: RunningDaemon;
  let tmp: string;
  let agent: RunningProgram | undefined;
  const meshctl = (...args: string[]) => runCli('meshctl', [...args, '--orchconfig', world.kubeconfig]);

  before(async () => {
    world = await startOrchWorld({ simulateCluster: false, namespaces: ['mesh-system', 'vm'] });
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-vm-'));
    await world.apply('apiVersion: v1\nkind: ServiceAccount\nmetadata: { name: web-sa, namespace: vm }\n');
    await world.apply('apiVersion: v1\nkind: ConfigMap\nmetadata: { name: mesh, namespace: mesh-system }\ndata:\n  mesh: |\n    trustDomain: cluster.local\n    defaultConfig:\n      proxyMetadata: { FROM_MESH: "yes" }\n');
    daemon = await startOrchDaemon(world, [], { JWT_RULE: await orchTokenJwtRule(world.server), POD_NAME: 'meshd-0' });
    // The daemon publishes its roots into each namespace; wait for vm's copy.
    await waitFor(() => world.server.get('v1', 'ConfigMap', 'vm', 'mesh-ca-root-cert'), (cm) => cm?.data?.['root-cert.pem'] === daemon.rootCertPem(), 'mesh-ca-root-cert in vm');
  });

  after(async () => {
    await agent?.stop();
    await daemon?.stop();
    await world?.close();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('prints a WorkloadGroup that kubectl applies', async () => {
    const r = await runCli('meshctl', ['x', 'workload', 'group', 'create', '--name', 'web', '-n', 'vm', '-l', 'app=web,version=v1', '-a', 'team=a', '-p', 'http=8080', '-s', 'web-sa', '--network', 'vm-net']);
    expect([r.code, r.stderr]).to.deep.equal([0, '']);
    expect(parse(r.stdout)).to.deep.equal({
      apiVersion: 'networking.mesh.io/v1',
      kind: 'WorkloadGroup',
      metadata: { name: 'web', namespace: 'vm' },
      spec: { metadata: { annotations: { team: 'a' }, labels: { app: 'web', version: 'v1' } }, template: { ports: { http: 8080 }, serviceAccount: 'web-sa', network: 'vm-net' } },
    });
    fs.writeFileSync(path.join(tmp, 'group.yaml'), r.stdout);
    const applied = await kubectl(world.kubeconfig, ['apply', '-f', path.join(tmp, 'group.yaml')]);
    expect(applied.stdout.trim()).to.equal('workloadgroup.networking.mesh.io/web created');
  });

  it('refuses a group without name or namespace and bad ports, in one line', async () => {
    const cases: [string[], string][] = [
      [['-n', 'vm'], 'Error: expecting a WorkloadGroup name (--name)'],
      [['--name', 'web'], 'Error: expecting a WorkloadGroup namespace (--namespace)'],
      [['--name', 'web', '-n', 'vm', '-p', 'http=99999'], 'Error: --ports "http=99999": expected name=port with a port from 1 to 65535'],
    ];
    for (const [args, message] of cases) {
      const r = await runCli('meshctl', ['x', 'workload', 'group', 'create', ...args]);
      expect([r.code, r.stdout, r.stderr]).to.deep.equal([1, '', `${message}\n`]);
    }
  });

  it('writes the VM files from the group file, with a token of --tokenDuration for its service account', async () => {
    const out = path.join(tmp, 'files');
    const r = await meshctl('x', 'workload', 'entry', 'configure', '-f', path.join(tmp, 'group.yaml'), '-o', out, '--clusterID', 'cluster-1', '--autoregister', '--ingressIP', '127.0.0.1', '--internalIP', '127.0.0.91', '--tokenDuration', '1200');
    expect(r.stderr).to.equal('');
    expect(r.code).to.equal(0);
    expect(fs.readdirSync(out).sort()).to.deep.equal(['cluster.env', 'hosts', 'mesh-token', 'mesh.yaml', 'root-cert.pem']);
    const env = sourceEnv(fs.readFileSync(path.join(out, 'cluster.env'), 'utf8'));
    expect(env).to.deep.equal({
      INSTANCE_IP: '127.0.0.91',
      MESH_METAJSON_LABELS: JSON.stringify({ app: 'web', version: 'v1' }),
      MESH_META_AUTO_REGISTER_GROUP: 'web',
      MESH_META_CLUSTER_ID: 'cluster-1',
      MESH_META_DNS_CAPTURE: 'false',
      MESH_META_NETWORK: 'vm-net',
      MESH_META_WORKLOAD_NAME: 'web',
      POD_NAMESPACE: 'vm',
    });
    const mesh = parse(fs.readFileSync(path.join(out, 'mesh.yaml'), 'utf8'));
    expect(mesh.trustDomain).to.equal('cluster.local');
    expect(mesh.defaultConfig.discoveryAddress).to.equal('meshd.mesh-system.svc:15012');
    expect(mesh.defaultConfig.proxyMetadata).to.deep.equal({ FROM_MESH: 'yes', ...env });
    expect(fs.readFileSync(path.join(out, 'root-cert.pem'), 'utf8')).to.equal(daemon.rootCertPem());
    expect(fs.readFileSync(path.join(out, 'hosts'), 'utf8')).to.equal('127.0.0.1 meshd.mesh-system.svc\n');
    const claims = jwtClaims(fs.readFileSync(path.join(out, 'mesh-token'), 'utf8'));
    expect(claims.sub).to.equal('system:serviceaccount:vm:web-sa');
    expect(claims.aud).to.deep.equal(['mesh-ca']);
    expect(claims.exp - claims.iat).to.equal(1200);
  });

  it('lets a pilot-agent outside the orchestrator get its certificate and config with those files, and register itself', async () => {
    const out = path.join(tmp, 'files');
    const work = fs.mkdtempSync(path.join(tmp, 'agent-'));
    // What the hosts line does on the VM: the daemon's name resolves to the gateway, here the daemon itself.
    const proxyConfig = { discoveryAddress: `127.0.0.1:${daemon.secureGrpcPort}`, controlPlaneAuthPolicy: 'MUTUAL_TLS', interceptionMode: 'NONE', binaryPath: '/nonexistent/envoy', proxyAdminPort: 0 };
    agent = startProgram('pilot-agent', ['proxy', '--meshConfig', path.join(out, 'mesh.yaml')], {
      ...sourceEnv(fs.readFileSync(path.join(out, 'cluster.env'), 'utf8')),
      MESH_JWT_PATH: path.join(out, 'mesh-token'),
      CA_ROOT_CA: path.join(out, 'root-cert.pem'),
      XDS_ROOT_CA: path.join(out, 'root-cert.pem'),
      MESHD_SAN: 'meshd.mesh-system.svc',
      OUTPUT_CERTS: path.join(work, 'certs'),
      PROXY_CONFIG: JSON.stringify(proxyConfig),
      PROXY_STATUS_PORT: '0',
      MINIMUM_DRAIN_DURATION: '0s',
    }, work);
    await agent.waitForLog(/built-in proxy ready/, 20_000);
    const chain = fs.readFileSync(path.join(work, 'certs', 'cert-chain.pem'), 'utf8');
    expect(chain).to.contain('BEGIN CERTIFICATE');
    const { X509Certificate } = await import('node:crypto');
    expect(new X509Certificate(chain).subjectAltName).to.contain('spiffe://cluster.local/ns/vm/sa/web-sa');
    const entry = await waitFor(() => world.server.get('networking.mesh.io/v1', 'WorkloadEntry', 'vm', 'web-127.0.0.91-vm-net'), (e) => e !== undefined, 'the auto-registered WorkloadEntry');
    expect(entry.spec).to.include({ address: '127.0.0.91', serviceAccount: 'web-sa', network: 'vm-net' });
  });

  it('reads the group from the API by --name/-n, takes the gateway address from --ingressService, and names what is missing', async () => {
    await world.apply('apiVersion: v1\nkind: Service\nmetadata: { name: gw, namespace: mesh-system }\nspec: { type: LoadBalancer, ports: [{ port: 15012 }] }\n');
    const svc = world.server.get('v1', 'Service', 'mesh-system', 'gw');
    await world.server.update({ ...svc, status: { loadBalancer: { ingress: [{ ip: '192.0.2.10' }] } } });
    const out = path.join(tmp, 'api');
    const r = await meshctl('x', 'workload', 'entry', 'configure', '--name', 'web', '-n', 'vm', '-o', out, '--ingressService', 'gw.mesh-system', '--capture-dns', '-r', 'canary');
    expect([r.code, r.stderr]).to.deep.equal([0, '']);
    expect(fs.readFileSync(path.join(out, 'hosts'), 'utf8')).to.equal('192.0.2.10 meshd-canary.mesh-system.svc\n');
    const env = sourceEnv(fs.readFileSync(path.join(out, 'cluster.env'), 'utf8'));
    expect(env).to.include({ MESH_META_DNS_CAPTURE: 'true', MESH_META_CLUSTER_ID: 'Orch' });
    expect(env).to.not.have.property('MESH_META_AUTO_REGISTER_GROUP');

    const noGateway = await meshctl('x', 'workload', 'entry', 'configure', '--name', 'web', '-n', 'vm', '-o', path.join(tmp, 'nogw'));
    expect(noGateway.code).to.equal(0);
    expect(noGateway.stderr).to.equal('Warning: cannot read the gateway Service mesh-system/mesh-eastwestgateway (not found); hosts is empty: give --ingressIP\n');

    const cases: [string[], string][] = [
      [['--name', 'nope', '-n', 'vm', '-o', out], 'Error: WorkloadGroup vm/nope not found'],
      [['--name', 'web', '-n', 'vm'], 'Error: requires an output directory (--output)'],
      [['-o', out], 'Error: expecting a WorkloadGroup: give --file, or --name and --namespace'],
      [['-f', path.join(tmp, 'missing.yaml'), '-o', out], `Error: cannot read --file ${path.join(tmp, 'missing.yaml')}: ENOENT: no such file or directory, stat '${path.join(tmp, 'missing.yaml')}'`],
      [['--name', 'web', '-n', 'vm', '-o', out, '--ingressIP', 'x'], 'Error: --ingressIP "x": not an IP address'],
    ];
    for (const [args, message] of cases) {
      const failed = await meshctl('x', 'workload', 'entry', 'configure', ...args);
      expect([failed.code, failed.stdout, failed.stderr], args.join(' ')).to.deep.equal([1, '', `${message}\n`]);
    }
    fs.writeFileSync(path.join(tmp, 'bad.yaml'), 'a: &a [1]\nb: *a\n');
    const bad = await meshctl('x', 'workload', 'entry', 'configure', '-f', path.join(tmp, 'bad.yaml'), '-o', out);
    expect([bad.code, bad.stderr]).to.deep.equal([1, `Error: ${path.join(tmp, 'bad.yaml')}: not a WorkloadGroup\n`]);
  });
});

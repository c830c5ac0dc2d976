import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { resourcesOf, sidecarNode, SotwClient } from '../../helpers/ads-client';
import { RunningDaemon, startDaemon } from '../../helpers/daemon';
import { workloadServiceYaml } from '../../helpers/push';
import { runCli } from '../../helpers/run-cli';

const LDS = 'type.googleapis.com/envoy.config.listener.v3.Listener';

/**
 * httpbin (10.0.0.10) in foo, allowing the sleep identity of the local trust domain, and a
 * selector-less DENY policy in mesh-root: mesh-wide only if mesh-root is the root namespace.
 */
const CONFIG = `
${workloadServiceYaml({ namespace: 'foo', name: 'httpbin', address: '10.0.0.10', ports: ['{ number: 8000, name: http, protocol: HTTP, targetPort: 8080 }'], labels: { app: 'httpbin' } })}
---
apiVersion: security.mesh.io/v1
kind: AuthorizationPolicy
metadata: { name: allow-sleep, namespace: foo }
spec:
  selector: { matchLabels: { app: httpbin } }
  rules: [{ from: [{ source: { principals: ["cluster.local/ns/foo/sa/sleep"] } }] }]
---
apiVersion: security.mesh.io/v1
kind: AuthorizationPolicy
metadata: { name: deny-intruder, namespace: mesh-root }
spec:
  action: DENY
  rules: [{ from: [{ source: { principals: ["cluster.local/ns/bad/sa/intruder"] } }] }]
`;

describe('pilot-discovery --meshConfig', function () {
  this.timeout(30_000);
  let dir: string;
  let daemon: RunningDaemon | undefined;
  let client: SotwClient | undefined;

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-meshconfig-'));
    fs.mkdirSync(path.join(dir, 'config'));
    fs.writeFileSync(path.join(dir, 'config', 'httpbin.yaml'), CONFIG);
  });
  afterEach(async () => {
    client?.close();
    await daemon?.stop();
    client = daemon = undefined;
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** httpbin's inbound listener, as its proxy receives it over ADS, in JSON. */
  async function httpbinListener(args: string[]): Promise<string> {
    daemon = await startDaemon(['--configDir', path.join(dir, 'config'), ...args]);
    client = new SotwClient(daemon.grpcPort, sidecarNode('10.0.0.10', 'foo', { LABELS: JSON.stringify({ app: 'httpbin' }) }));
    client.send({ type_url: LDS });
    const listener = resourcesOf(await client.next(LDS)).find((l) => l.name === '10.0.0.10_8000');
    expect(listener, 'inbound listener 10.0.0.10_8000').to.not.equal(undefined);
    return JSON.stringify(listener);
  }

  it('puts RBAC principals in the trust domain of the file, and applies policies of its root namespace mesh-wide', async () => {
    const file = path.join(dir, 'mesh.yaml');
    fs.writeFileSync(file, 'trustDomain: example.org\nrootNamespace: mesh-root\n');
    const listener = await httpbinListener(['--meshConfig', file]);
    expect(listener).to.contain('"spiffe://example.org/ns/foo/sa/sleep"');
    expect(listener).to.contain('"spiffe://example.org/ns/bad/sa/intruder"');
    expect(listener).to.not.contain('spiffe://cluster.local/');
  });

  it('uses the defaults when the file does not exist: cluster.local, and mesh-root is an ordinary namespace', async () => {
    const listener = await httpbinListener(['--meshConfig', path.join(dir, 'absent.yaml')]);
    expect(listener).to.contain('"spiffe://cluster.local/ns/foo/sa/sleep"');
    expect(listener).to.not.contain('intruder');
  });

  it('refuses to start with a file that has a wrongly typed field or does not parse, naming the file and field', async () => {
    const addrs = ['--grpcAddr', '127.0.0.1:0', '--httpAddr', '127.0.0.1:0', '--monitoringAddr', '127.0.0.1:0', '--secureGRPCAddr', '', '--httpsAddr', ''];
    const file = path.join(dir, 'mesh.yaml');
    fs.writeFileSync(file, 'trustDomain: 42\n');
    const typed = await runCli('pilot-discovery', ['discovery', '--meshConfig', file, ...addrs]);
    expect(typed.code).to.equal(1);
    expect(typed.stderr).to.equal(`Error: --meshConfig ${file}: trustDomain: must be a string\n`);

    fs.writeFileSync(file, 'trustDomain: [example.org\n');
    const broken = await runCli('pilot-discovery', ['discovery', '--meshConfig', file, ...addrs]);
    expect(broken.code).to.equal(1);
    expect(broken.stderr).to.match(new RegExp(`^Error: --meshConfig ${file}: not valid YAML: .*\\n$`));
  });
});

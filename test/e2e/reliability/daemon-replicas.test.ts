import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { resourcesOf, sidecarNode, SotwClient } from '../../helpers/ads-client';
import { RunningDaemon, startDaemon } from '../../helpers/daemon';
import { httpGet } from '../../helpers/http';
import { OrchApiServer, startOrchApiServer } from '../../helpers/orch-api';
import { CA_CERT_FILE, CA_KEY_FILE, CERT_CHAIN_FILE, ROOT_CERT_FILE } from '../../../src/modules/security/ca/plugged-in';
import { makeOperatorCa, writeDir } from '../../modules/security/ca/helpers';

const SYSTEM = 'mesh-system';
const LEASE_MS = 2000;
const RETRY_MS = LEASE_MS / 4;
const NAMESPACE_LEASE = 'mesh-namespace-controller-election';
const VALIDATION_LEASE = 'mesh-validation-controller-election';
const CDS = 'type.googleapis.com/envoy.config.cluster.v3.Cluster';

async function eventually(check: () => boolean, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * Two daemon replicas against one API server, sharing a plugged-in CA (as replicas share the
 * cluster's CA): one leader per controller group, the other takes over when the leader is killed,
 * and every write to the webhook configurations and root ConfigMaps is made once.
 */
describe('two daemon replicas: leader election of the singleton controllers', function () {
  this.timeout(90_000);
  let server: OrchApiServer;
  const replicas = new Map<string, RunningDaemon>();
  let root: string;
  let kubeconfig: string;

  before(async () => {
    server = await startOrchApiServer({ bookmarkIntervalMs: 200 });
    for (const name of [SYSTEM, 'shop', 'books']) await server.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    await server.create({
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingWebhookConfiguration',
      metadata: { name: 'mesh-sidecar-injector' },
      webhooks: [
        {
          name: 'namespace.sidecar-injector.mesh.io',
          clientConfig: { service: { namespace: SYSTEM, name: 'meshd', path: '/inject' } },
          rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['pods'] }],
          namespaceSelector: { matchLabels: { 'mesh-injection': 'enabled' } },
          sideEffects: 'None',
          admissionReviewVersions: ['v1'],
        },
      ],
    });
    const ca = await makeOperatorCa();
    root = ca.rootPem;
    const caDir = writeDir({ [CA_CERT_FILE]: ca.intermediatePem, [CA_KEY_FILE]: ca.intermediateKeyPem, [CERT_CHAIN_FILE]: ca.intermediatePem, [ROOT_CERT_FILE]: ca.rootPem });
    kubeconfig = server.writeKubeconfigFile(fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-replicas-')));
    const env = (pod: string) => ({ POD_NAME: pod, ROOT_CA_DIR: caDir, MESH_LEADER_ELECTION_LEASE_DURATION: `${LEASE_MS / 1000}s` });
    const [a, b] = await Promise.all([startDaemon(['--orchconfig', kubeconfig], env('meshd-a')), startDaemon(['--orchconfig', kubeconfig], env('meshd-b'))]);
    replicas.set('meshd-a', a);
    replicas.set('meshd-b', b);
  });

  after(async () => {
    await Promise.all([...replicas.values()].map((d) => d.stop()));
    await server?.stop();
  });

  const holder = (lease: string) => server.get('coordination.k8s.io/v1', 'Lease', SYSTEM, lease)?.spec?.holderIdentity as string | undefined;
  const rootCm = (ns: string) => server.get('v1', 'ConfigMap', ns, 'mesh-ca-root-cert');
  const caBundle = () => server.get('admissionregistration.k8s.io/v1', 'MutatingWebhookConfiguration', undefined, 'mesh-sidecar-injector').webhooks[0].clientConfig.caBundle as string | undefined;
  const writes = (resource: string) => server.requests.log.filter((r) => r.resource === resource && ['create', 'update', 'patch'].includes(r.verb ?? '')).length;

  it('elects exactly one leader per controller group, and only it writes; both replicas serve xDS', async () => {
    await eventually(() => holder(NAMESPACE_LEASE) !== undefined && holder(VALIDATION_LEASE) !== undefined, 10_000, 'both Leases held');
    await eventually(() => ['default', 'kube-system', SYSTEM, 'shop', 'books'].every((ns) => rootCm(ns)) && caBundle() === Buffer.from(root).toString('base64'), 10_000, 'the leader\'s writes');
    // Several renewals later: the same holders, and only they say they lead.
    const leaders = { ns: holder(NAMESPACE_LEASE)!, validation: holder(VALIDATION_LEASE)! };
    await new Promise((r) => setTimeout(r, LEASE_MS));
    expect(holder(NAMESPACE_LEASE)).to.equal(leaders.ns);
    expect(holder(VALIDATION_LEASE)).to.equal(leaders.validation);
    for (const [pod, daemon] of replicas) {
      expect(daemon.output().includes(`lock obtained: ${SYSTEM}/${NAMESPACE_LEASE}`), `${pod} leads the namespace controller`).to.equal(pod === leaders.ns);
      expect(daemon.output().includes(`lock obtained: ${SYSTEM}/${VALIDATION_LEASE}`), `${pod} leads the validation controller`).to.equal(pod === leaders.validation);
    }
    // One create per namespace, one patch of the webhook configuration: no replica repeated another's write.
    expect(writes('configmaps')).to.equal(5);
    expect(writes('mutatingwebhookconfigurations')).to.equal(1);
    expect(rootCm('shop').data['root-cert.pem']).to.equal(root);

    for (const daemon of replicas.values()) {
      expect((await httpGet(daemon.httpPort, '/ready')).status).to.equal(200);
      const client = new SotwClient(daemon.grpcPort, sidecarNode('10.8.0.9', 'shop'));
      try {
        client.send({ type_url: CDS });
        expect(resourcesOf(await client.next(CDS))).to.be.an('array');
      } finally {
        client.close();
      }
    }
  });

  it('when the leader is killed, the other replica takes over within the lease duration (plus one retry) and carries on', async () => {
    const leader = holder(NAMESPACE_LEASE)!;
    const follower = [...replicas.keys()].find((p) => p !== leader)!;
    const configMapWrites = writes('configmaps');
    const killed = replicas.get(leader)!;
    const killedAt = Date.now();
    await killed.stop('SIGKILL');
    replicas.delete(leader);
    // A killed leader releases nothing: the follower waits for the Lease to expire.
    await eventually(() => holder(NAMESPACE_LEASE) === follower, LEASE_MS + 2 * RETRY_MS + 2000, `${follower} to take over`);
    const failover = Date.now() - killedAt;
    expect(failover).to.be.below(LEASE_MS + 2 * RETRY_MS * 1.2 + 500);
    await eventually(() => holder(VALIDATION_LEASE) === follower, LEASE_MS + 2 * RETRY_MS + 2000, `${follower} to lead the validation controller too`);

    // The new leader works: a new namespace gets the roots, an edited caBundle is repaired.
    await server.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'after-failover' } });
    await eventually(() => rootCm('after-failover') !== undefined, 5000, 'the ConfigMap in the new namespace');
    const config = server.get('admissionregistration.k8s.io/v1', 'MutatingWebhookConfiguration', undefined, 'mesh-sidecar-injector');
    config.webhooks[0].clientConfig.caBundle = Buffer.from('tampered').toString('base64');
    await server.update(config);
    await eventually(() => caBundle() === Buffer.from(root).toString('base64'), 5000, 'the caBundle repaired by the new leader');
    // Taking over rewrote nothing that was already right: one create for the new namespace only.
    expect(writes('configmaps')).to.equal(configMapWrites + 1);
  });

  it('a leader stopping gracefully releases its Leases at once', async () => {
    const [pod, daemon] = [...replicas.entries()][0];
    expect(holder(NAMESPACE_LEASE)).to.equal(pod);
    await daemon.stop();
    replicas.delete(pod);
    expect(holder(NAMESPACE_LEASE)).to.equal('');
    expect(holder(VALIDATION_LEASE)).to.equal('');
    expect(daemon.output()).to.contain(`released Lease ${SYSTEM}/${NAMESPACE_LEASE}`);
  });
});

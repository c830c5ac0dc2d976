import { expect } from 'chai';
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { RunningDaemon, startDaemon } from '../../helpers/daemon';
import { httpGet, metricValue } from '../../helpers/http';
import { installMeshCrds } from '../../helpers/mesh-crds';
import { OrchApiServer, startOrchApiServer } from '../../helpers/orch-api';

const SYSTEM = 'mesh-system';
const CM = 'mesh-ca-root-cert';

async function eventually(check: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const b64 = (pem: string) => Buffer.from(pem).toString('base64');

/** The real kubectl, as a user runs it. */
function kubectl(kubeconfig: string, args: string[], input?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile('kubectl', ['--kubeconfig', kubeconfig, ...args], { timeout: 20_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
    if (input !== undefined) child.stdin!.end(input);
  });
}

function mutatingConfig(name: string, labels: Record<string, string> = {}): Record<string, unknown> {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'MutatingWebhookConfiguration',
    metadata: { name, labels },
    webhooks: ['namespace', 'object'].map((which) => ({
      name: `${which}.sidecar-injector.mesh.io`,
      clientConfig: { service: { namespace: SYSTEM, name: 'meshd', path: '/inject', port: 443 } },
      rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['pods'] }],
      namespaceSelector: { matchLabels: { 'mesh-injection': 'enabled', [`unused-${which}`]: 'x' } },
      sideEffects: 'None',
      admissionReviewVersions: ['v1'],
      failurePolicy: 'Fail',
    })),
  };
}

function validatingConfig(name: string): Record<string, unknown> {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name, labels: { 'mesh.io/rev': 'default' } },
    webhooks: [
      {
        name: 'rev.validation.mesh.io',
        clientConfig: { service: { namespace: SYSTEM, name: 'meshd', path: '/validate', port: 443 } },
        rules: [{ apiGroups: ['security.mesh.io', 'networking.mesh.io'], apiVersions: ['*'], operations: ['CREATE', 'UPDATE'], resources: ['*'] }],
        sideEffects: 'None',
        admissionReviewVersions: ['v1', 'v1beta1'],
        // As installed: fail-open until the daemon has shown it answers.
        failurePolicy: 'Ignore',
      },
    ],
  };
}

describe('trust plumbing on the orchestrator: webhook caBundles and the root certificate in every namespace', function () {
  this.timeout(60_000);
  let server: OrchApiServer;
  let daemon: RunningDaemon;
  let root: string;
  let kubeconfig: string;

  before(async () => {
    server = await startOrchApiServer({ bookmarkIntervalMs: 200 });
    await server.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: SYSTEM } });
    await server.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } });
    await installMeshCrds(server);
    // Installed before the daemon starts, with a stale caBundle.
    const mutating = mutatingConfig('mesh-sidecar-injector') as { webhooks: Array<{ clientConfig: Record<string, unknown> }> };
    mutating.webhooks[0].clientConfig.caBundle = b64('stale');
    await server.create(mutating);
    await server.create(validatingConfig('mesh-mesh-system'));
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-trust-'));
    kubeconfig = server.writeKubeconfigFile(dir);
    daemon = await startDaemon(['--orchconfig', kubeconfig], { POD_NAME: 'meshd-a', MESH_LEADER_ELECTION_LEASE_DURATION: '2s' });
    root = daemon.rootCertPem();
    server.serviceEndpoints.set(`${SYSTEM}/meshd`, `https://127.0.0.1:${daemon.httpsPort}`);
  });

  after(async () => {
    await daemon?.stop();
    await server?.stop();
  });

  const rootCm = (ns: string) => server.get('v1', 'ConfigMap', ns, CM);

  it('publishes the root certificate to every namespace but the orchestrator\'s own, labelled, with root-cert.pem only', async () => {
    await eventually(() => [SYSTEM, 'shop', 'default', 'kube-system'].every((ns) => rootCm(ns) !== undefined), 10_000, 'the ConfigMaps');
    for (const ns of [SYSTEM, 'shop', 'default', 'kube-system']) {
      const cm = rootCm(ns);
      expect(cm.data, ns).to.deep.equal({ 'root-cert.pem': root });
      expect(cm.metadata.labels).to.deep.equal({ 'mesh.io/config': 'true' });
    }
    expect(rootCm('kube-public')).to.equal(undefined);
    expect(rootCm('kube-node-lease')).to.equal(undefined);
  });

  it('publishes it to a namespace created later, and restores it when deleted or edited', async () => {
    await server.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'late' } });
    await eventually(() => rootCm('late') !== undefined, 5000, 'the ConfigMap in the new namespace');
    await server.delete('v1', 'ConfigMap', 'shop', CM);
    await eventually(() => rootCm('shop') !== undefined, 5000, 'the deleted ConfigMap back');
    expect(rootCm('shop').data['root-cert.pem']).to.equal(root);
    const edited = rootCm('default');
    await server.update({ ...edited, data: { 'root-cert.pem': 'tampered', extra: 'x' } });
    await eventually(() => rootCm('default')?.data?.extra === undefined && rootCm('default')?.data?.['root-cert.pem'] === root, 5000, 'the edited ConfigMap restored');
  });

  it('keeps the injection webhook caBundle equal to the daemon root, repairing an edit', async () => {
    const bundles = () => (server.get('admissionregistration.k8s.io/v1', 'MutatingWebhookConfiguration', undefined, 'mesh-sidecar-injector').webhooks as Array<{ clientConfig: { caBundle?: string } }>).map((w) => w.clientConfig.caBundle);
    await eventually(() => bundles().every((b) => b === b64(root)), 10_000, 'the caBundle patched');
    const config = server.get('admissionregistration.k8s.io/v1', 'MutatingWebhookConfiguration', undefined, 'mesh-sidecar-injector');
    config.webhooks[1].clientConfig.caBundle = b64('someone else');
    await server.update(config);
    await eventually(() => bundles().every((b) => b === b64(root)), 5000, 'the caBundle repaired');
    // The rest of the configuration is untouched.
    const after = server.get('admissionregistration.k8s.io/v1', 'MutatingWebhookConfiguration', undefined, 'mesh-sidecar-injector');
    expect(after.webhooks[1].namespaceSelector).to.deep.equal({ matchLabels: { 'mesh-injection': 'enabled', 'unused-object': 'x' } });
  });

  it('leaves a configuration labelled for another revision alone', async () => {
    const other = mutatingConfig('mesh-sidecar-injector-canary', { 'mesh.io/rev': 'canary' }) as { webhooks: Array<{ clientConfig: Record<string, unknown> }> };
    other.webhooks[0].clientConfig.caBundle = b64('canary root');
    await server.create(other);
    // Not claimed at all (its label names another revision), so it keeps its bundle.
    await new Promise((r) => setTimeout(r, 1000));
    const stored = server.get('admissionregistration.k8s.io/v1', 'MutatingWebhookConfiguration', undefined, 'mesh-sidecar-injector-canary');
    expect(stored.webhooks[0].clientConfig.caBundle).to.equal(b64('canary root'));
    const metrics = (await httpGet(daemon.monitoringPort, '/metrics')).body;
    expect(metricValue(metrics, 'webhook_patch_attempts_total', { name: 'mesh-sidecar-injector' })).to.be.at.least(2);
    expect(metricValue(metrics, 'webhook_patch_attempts_total', { name: 'mesh-sidecar-injector-canary' })).to.equal(0);
  });

  it('patches the validating webhook caBundle and turns it fail-closed once invalid config is denied through it', async () => {
    const webhook = () => server.get('admissionregistration.k8s.io/v1', 'ValidatingWebhookConfiguration', undefined, 'mesh-mesh-system').webhooks[0];
    await eventually(() => webhook().clientConfig.caBundle === b64(root) && webhook().failurePolicy === 'Fail', 15_000, 'caBundle and failurePolicy Fail');
    // The switch came from a real call: the dry run reached /validate and was denied.
    expect(server.webhookCalls.some((c) => c.webhook === 'rev.validation.mesh.io' && c.allowed === false)).to.equal(true);
    // The dry run left nothing behind.
    expect(server.list('networking.mesh.io/v1', 'Gateway', SYSTEM)).to.deep.equal([]);
    const metrics = (await httpGet(daemon.monitoringPort, '/metrics')).body;
    expect(metricValue(metrics, 'validator_validation_config_updates')).to.be.at.least(1);
    expect(metricValue(metrics, 'validator_validation_failed', { reason: 'invalid_resource' })).to.be.at.least(1);
  });

  it('an invalid mesh resource is now refused by the API server with the field named; a valid one is stored', async () => {
    let message = '';
    try {
      await server.create(
        // The CRD schema lets it through (hosts are optional there); the mesh's rules do not.
        { apiVersion: 'networking.mesh.io/v1', kind: 'Gateway', metadata: { name: 'edge', namespace: 'shop' }, spec: { servers: [{ port: { number: 80, name: 'http', protocol: 'HTTP' } }] } },
        { admission: true },
      );
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).to.contain('admission webhook "rev.validation.mesh.io" denied the request: configuration is invalid: Gateway shop/edge: spec.servers[0].hosts');
    const good = await server.create(
      { apiVersion: 'networking.mesh.io/v1', kind: 'Gateway', metadata: { name: 'edge', namespace: 'shop' }, spec: { servers: [{ port: { number: 80, name: 'http', protocol: 'HTTP' }, hosts: ['*'] }] } },
      { admission: true },
    );
    expect(good.metadata.name).to.equal('edge');
  });

  it('retries a patch the API server refuses, counting attempts, retries, failures and update errors', async () => {
    const metricsBefore = (await httpGet(daemon.monitoringPort, '/metrics')).body;
    const retriesBefore = metricValue(metricsBefore, 'webhook_patch_retries_total', { name: 'mesh-sidecar-injector' });
    // Two conflicting writes refused, as when another writer got there first.
    server.faults.failRequests(409, { count: 2, match: /^PUT .*mutatingwebhookconfigurations\/mesh-sidecar-injector/ });
    const config = server.get('admissionregistration.k8s.io/v1', 'MutatingWebhookConfiguration', undefined, 'mesh-sidecar-injector');
    config.webhooks[0].clientConfig.caBundle = b64('edited again');
    await server.update(config);
    const bundle = () => server.get('admissionregistration.k8s.io/v1', 'MutatingWebhookConfiguration', undefined, 'mesh-sidecar-injector').webhooks[0].clientConfig.caBundle;
    await eventually(() => bundle() === b64(root), 10_000, 'the caBundle repaired after the refusals');

    server.faults.failRequests(409, { count: 1, match: /^PUT .*validatingwebhookconfigurations\/mesh-mesh-system/ });
    const validating = server.get('admissionregistration.k8s.io/v1', 'ValidatingWebhookConfiguration', undefined, 'mesh-mesh-system');
    validating.webhooks[0].clientConfig.caBundle = b64('edited');
    await server.update(validating);
    const validatingBundle = () => server.get('admissionregistration.k8s.io/v1', 'ValidatingWebhookConfiguration', undefined, 'mesh-mesh-system').webhooks[0].clientConfig.caBundle;
    await eventually(() => validatingBundle() === b64(root), 10_000, 'the validating caBundle repaired after the refusal');

    const metrics = (await httpGet(daemon.monitoringPort, '/metrics')).body;
    // At least the refusals made here: on a busy machine the controller can also write from a
    // cache that has not seen the edit yet, which the server refuses as a real conflict.
    expect(metricValue(metrics, 'webhook_patch_retries_total', { name: 'mesh-sidecar-injector' }) - retriesBefore).to.be.at.least(2);
    expect(metricValue(metrics, 'webhook_patch_failures_total', { name: 'mesh-sidecar-injector', reason: 'webhook_update_failure' })).to.be.at.least(2);
    expect(metricValue(metrics, 'validator_validation_config_update_error', { reason: 'Conflict' })).to.be.at.least(1);
  });

  it('kubectl apply of an invalid custom resource is refused with the field named; fixed, it applies', async () => {
    const policy = (action: string) =>
      ['apiVersion: security.mesh.io/v1', 'kind: AuthorizationPolicy', 'metadata:', '  name: deny-nothing', '  namespace: shop', 'spec:', `  action: ${action}`, '  selector:', '    matchLabels:', '      app: cart', ''].join('\n');
    // DENY without rules passes the CRD schema but never triggers: the mesh refuses it.
    const refused = await kubectl(kubeconfig, ['apply', '-f', '-'], policy('DENY'));
    expect(refused.code).to.not.equal(0);
    expect(refused.stderr).to.contain('admission webhook "rev.validation.mesh.io" denied the request: configuration is invalid: AuthorizationPolicy shop/deny-nothing: spec.action: DENY');
    expect(server.get('security.mesh.io/v1', 'AuthorizationPolicy', 'shop', 'deny-nothing')).to.equal(undefined);
    const applied = await kubectl(kubeconfig, ['apply', '-f', '-'], policy('ALLOW'));
    expect(applied.code, applied.stderr).to.equal(0);
    expect(applied.stdout).to.contain('authorizationpolicy.security.mesh.io/deny-nothing created');
  });
});

describe('trust plumbing when the root rotates', function () {
  this.timeout(60_000);

  it('re-patches the webhook caBundle and rewrites every namespace\'s root ConfigMap with the new roots', async () => {
    const server = await startOrchApiServer({ bookmarkIntervalMs: 200 });
    let daemon: RunningDaemon | undefined;
    try {
      await server.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: SYSTEM } });
      await server.create(mutatingConfig('mesh-sidecar-injector'));
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-trust-rotation-'));
      daemon = await startDaemon(['--orchconfig', server.writeKubeconfigFile(dir)], {
        POD_NAME: 'meshd-r',
        // A 12 s root, checked every second, renewed with 60 % of its life left: about 5 s after start.
        CA_SELF_SIGNED_CA_CERT_TTL: '12s',
        CA_SELF_SIGNED_ROOT_CERT_CHECK_INTERVAL: '1s',
        CA_SELF_SIGNED_ROOT_CERT_GRACE_PERIOD_PERCENTILE: '60',
        CA_ENABLE_JITTER_FOR_ROOT_CERT_ROTATOR: 'false',
      });
      const first = daemon.rootCertPem();
      const cm = () => server.get('v1', 'ConfigMap', 'default', CM)?.data?.['root-cert.pem'] as string | undefined;
      const bundle = () => server.get('admissionregistration.k8s.io/v1', 'MutatingWebhookConfiguration', undefined, 'mesh-sidecar-injector').webhooks[0].clientConfig.caBundle as string | undefined;
      await eventually(() => cm() === first && bundle() === b64(first), 10_000, 'the first root published');
      const d = daemon;
      await eventually(() => d.rootCertPem() !== first, 30_000, 'the root rotated');
      const rotated = d.rootCertPem();
      await eventually(() => cm() === rotated && bundle() === b64(rotated), 10_000, 'the rotated roots published and patched');
      expect(d.output()).to.contain('the roots changed: patching the injection webhook configurations');
    } finally {
      await daemon?.stop();
      await server.stop();
    }
  });
});

describe('trust plumbing without roots', function () {
  this.timeout(60_000);

  it('patches nothing and publishes nothing when the daemon has no CA, and counts why', async () => {
    const server = await startOrchApiServer({ bookmarkIntervalMs: 200 });
    let daemon: RunningDaemon | undefined;
    try {
      await server.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: SYSTEM } });
      await server.create(mutatingConfig('mesh-sidecar-injector'));
      await server.create(validatingConfig('mesh-mesh-system'));
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-trust-noca-'));
      daemon = await startDaemon(['--orchconfig', server.writeKubeconfigFile(dir)], { POD_NAME: 'meshd-n', ENABLE_CA_SERVER: 'false' });
      const d = daemon;
      await eventually(async () => {
        const metrics = (await httpGet(d.monitoringPort, '/metrics')).body;
        return (
          metricValue(metrics, 'webhook_patch_failures_total', { name: 'mesh-sidecar-injector', reason: 'load_ca_bundle_failure' }) >= 1 &&
          metricValue(metrics, 'validator_validation_config_load_error', { reason: 'missing_ca_bundle' }) >= 1
        );
      }, 10_000, 'the failures counted');
      expect(server.get('admissionregistration.k8s.io/v1', 'MutatingWebhookConfiguration', undefined, 'mesh-sidecar-injector').webhooks[0].clientConfig.caBundle).to.equal(undefined);
      expect(server.list('v1', 'ConfigMap').filter((cm: { metadata: { name: string } }) => cm.metadata.name === CM)).to.deep.equal([]);
    } finally {
      await daemon?.stop();
      await server.stop();
    }
  });
});

/**
 * `x precheck` findings from the API server: the orchestrator's version, install permissions
 * (SelfSubjectAccessReview, some denied), an installed control plane and `--from-version`,
 * another mesh's resources and injector, and pods running as the proxy's UID; and the message
 * formats.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { expect } from 'chai';
import { formatMessages, Message, Precheck, PrecheckOptions } from '../../../src/modules/diagnose';
import { OrchClient } from '../../../src/modules/orch';
import { OrchApiServer, startOrchApiServer, StartOptions } from '../../helpers/orch-api';
import { runCli } from '../../helpers/run-cli';
import { orchClient } from './support';

const OPTIONS: PrecheckOptions = { meshNamespace: 'mesh-system', namespace: '', revision: '', skipControlPlane: false, meshVersion: '0.2.0' };

function lines(messages: readonly Message[]): string[] {
  return formatMessages(messages, 'log').split('\n').filter(Boolean);
}

describe('diagnose: x precheck findings', function () {
  this.timeout(20_000);
  const servers: OrchApiServer[] = [];
  const clients: OrchClient[] = [];
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-precheck-'));

  async function cluster(options: StartOptions = {}): Promise<{ server: OrchApiServer; precheck: Precheck; kubeconfig: string }> {
    const server = await startOrchApiServer({ simulateCluster: false, ...options });
    await server.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'mesh-system' } });
    const kubeconfig = server.writeKubeconfigFile(dir);
    const client = orchClient(kubeconfig);
    servers.push(server);
    clients.push(client);
    return { server, precheck: new Precheck(client), kubeconfig };
  }

  after(async () => {
    for (const c of clients) c.stop();
    for (const s of servers) await s.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('finds nothing in an empty, recent cluster where everything is allowed', async () => {
    const { precheck } = await cluster();
    expect(await precheck.run(OPTIONS)).to.deep.equal([]);
  });

  it('reports an orchestrator older than the minimum, and each permission an install lacks, with the reason', async () => {
    const { server, precheck } = await cluster({ serverVersion: 'v1.27.4' });
    server.access.deny({ verb: 'create', group: 'apps', resource: 'deployments', namespace: 'mesh-system', reason: 'deployments are not yours' });
    server.access.deny({ verb: 'create', resource: 'clusterroles' });
    expect(lines(await precheck.run(OPTIONS))).to.deep.equal([
      'Error [MSH0141] (Cluster) Missing required permission to create resource clusterroles (permission denied)',
      'Error [MSH0141] (Cluster) Missing required permission to create resource deployments (deployments are not yours)',
      'Error [MSH0142] (Cluster) The Kubernetes Version "v1.27.4" is lower than the minimum version: 1.28',
    ]);
    expect(server.requests.count({ verb: 'create', resource: 'selfsubjectaccessreviews' })).to.equal(11);
    // --skip-controlplane asks neither.
    expect(await precheck.run({ ...OPTIONS, skipControlPlane: true })).to.deep.equal([]);
  });

  it('reports an installed control plane, and checks --from-version against it and this version', async () => {
    const { server, precheck } = await cluster();
    await server.create({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'meshd', namespace: 'mesh-system', labels: { app: 'meshd' } },
      spec: { selector: { matchLabels: { app: 'meshd' } }, template: { metadata: { labels: { app: 'meshd' } }, spec: { containers: [{ name: 'discovery', image: 'registry.mesh.io/pilot:0.1.3' }] } } },
    });
    // From 0.1 to 0.2 with 0.1.3 running: nothing wrong; the installed control plane is noted.
    const all = await precheck.run({ ...OPTIONS, fromVersion: '0.1' });
    expect(formatMessages(all, 'log')).to.equal('Info [MSH0901] (Cluster) The mesh control plane is installed in namespace mesh-system (revision default, version 0.1.3); installing again upgrades it.');
    expect(lines(await precheck.run({ ...OPTIONS, fromVersion: '0.3' }))).to.deep.equal([
      'Warning [MSH0903] (Deployment mesh-system/meshd) The control plane runs version 0.1.3, not 0.3 as --from-version says.',
      'Warning [MSH0904] (Cluster) Upgrading from 0.3 to 0.2 is a downgrade, which precheck does not check.',
      'Info [MSH0901] (Cluster) The mesh control plane is installed in namespace mesh-system (revision default, version 0.1.3); installing again upgrades it.',
    ]);
    expect(lines(await precheck.run({ ...OPTIONS, revision: 'canary', fromVersion: '0.1', skipControlPlane: true }))).to.deep.equal([
      'Error [MSH0902] (Cluster) --from-version 0.1 was given, but no control plane of revision canary is installed in namespace mesh-system.',
    ]);
    let error: Error | undefined;
    await precheck.run({ ...OPTIONS, fromVersion: 'latest' }).catch((e: Error) => (error = e));
    expect(error?.message).to.equal('--from-version: invalid version "latest", expected a form like 1.0');
  });

  it("reports another mesh's resource definitions and injector, and pods running as the proxy's UID", async () => {
    const { server, precheck } = await cluster();
    await server.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } });
    await server.create({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'virtualservices.networking.istio.io' },
      spec: { group: 'networking.istio.io', scope: 'Namespaced', names: { plural: 'virtualservices', kind: 'VirtualService' }, versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }] },
    });
    await server.create({
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingWebhookConfiguration',
      metadata: { name: 'istio-sidecar-injector' },
      webhooks: [{ name: 'namespace.sidecar-injector.istio.io', admissionReviewVersions: ['v1'], sideEffects: 'None', clientConfig: { url: 'https://istiod.example' } }],
    });
    await server.create({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'root-app', namespace: 'shop' }, spec: { containers: [{ name: 'app', image: 'app', securityContext: { runAsUser: 1337 } }] } });
    await server.create({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'fine', namespace: 'shop' }, spec: { containers: [{ name: 'app', image: 'app' }, { name: 'mesh-proxy', image: 'proxy', securityContext: { runAsUser: 1337 } }] } });
    const messages = await precheck.run(OPTIONS);
    expect(lines(messages)).to.deep.equal([
      "Error [MSH0906] (MutatingWebhookConfiguration istio-sidecar-injector) Its webhook namespace.sidecar-injector.istio.io injects another service mesh's sidecar: pods both injectors select would get two proxies.",
      'Warning [MSH0144] (Pod shop/root-app) User ID (UID) 1337 is reserved for the sidecar proxy.',
      'Warning [MSH0905] (CustomResourceDefinition virtualservices.networking.istio.io) The API group networking.istio.io belongs to another service mesh; its resources are not read by this mesh, and its control plane may act on the same workloads.',
    ]);
    expect(JSON.parse(formatMessages(messages.slice(1, 2), 'json'))).to.deep.equal([{ code: 'MSH0144', level: 'Warning', message: 'User ID (UID) 1337 is reserved for the sidecar proxy.', origin: 'Pod shop/root-app' }]);
    expect(formatMessages(messages.slice(1, 2), 'yaml')).to.equal("- code: MSH0144\n  level: Warning\n  message: User ID (UID) 1337 is reserved for the sidecar proxy.\n  origin: Pod shop/root-app");
    // -n limits the workloads looked at.
    expect(lines(await precheck.run({ ...OPTIONS, namespace: 'default', skipControlPlane: true }))).to.deep.equal([]);
  });

  describe('through meshctl', () => {
    const SAFE = '✔ No issues found when checking the cluster. Mesh is safe to install or upgrade!\n';

    it('says the cluster is safe (on stderr) and exits 0 when nothing is found; -o json prints []', async () => {
      const { kubeconfig } = await cluster();
      const r = await runCli('meshctl', ['experimental', 'precheck', '--orchconfig', kubeconfig]);
      expect(r).to.deep.include({ code: 0, stdout: '', stderr: SAFE });
      const json = await runCli('meshctl', ['x', 'precheck', '-o', 'json', '--orchconfig', kubeconfig]);
      expect(json).to.deep.include({ code: 0, stdout: '[]\n', stderr: SAFE });
    });

    it('prints the errors and exits 1 when a permission is denied or the orchestrator is too old', async () => {
      const { server, kubeconfig } = await cluster({ serverVersion: 'v1.26.1' });
      server.access.deny({ verb: 'create', group: 'admissionregistration.k8s.io', resource: 'mutatingwebhookconfigurations' });
      const r = await runCli('meshctl', ['x', 'precheck', '--orchconfig', kubeconfig]);
      expect(r.code).to.equal(1);
      expect(r.stdout).to.equal(
        'Error [MSH0141] (Cluster) Missing required permission to create resource mutatingwebhookconfigurations (permission denied)\n' +
          'Error [MSH0142] (Cluster) The Kubernetes Version "v1.26.1" is lower than the minimum version: 1.28\n',
      );
      expect(r.stderr.trim()).to.equal('Error: Issues found when checking the cluster. Mesh may not be safe to install or upgrade.');
      const yaml = await runCli('meshctl', ['x', 'precheck', '-o', 'yaml', '--skip-controlplane', '--orchconfig', kubeconfig]);
      expect(yaml).to.deep.include({ code: 0, stdout: '[]\n' });
    });

    it('shows messages at or above --output-threshold; warnings alone do not fail', async () => {
      const { server, kubeconfig } = await cluster();
      await server.create({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'root-app', namespace: 'default' }, spec: { securityContext: { runAsUser: 1337 }, containers: [{ name: 'app', image: 'app' }] } });
      await server.create({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'meshd', namespace: 'mesh-system', labels: { app: 'meshd', 'mesh.io/rev': 'canary' } }, spec: { selector: { matchLabels: { app: 'meshd' } }, template: { metadata: { labels: { app: 'meshd' } }, spec: { containers: [{ name: 'discovery', image: 'pilot:0.1.0' }] } } } });
      const warning = 'Warning [MSH0144] (Pod default/root-app) User ID (UID) 1337 is reserved for the sidecar proxy.\n';
      const info = 'Info [MSH0901] (Cluster) The mesh control plane is installed in namespace mesh-system (revision canary, version 0.1.0); installing again upgrades it.\n';
      expect(await runCli('meshctl', ['x', 'precheck', '--orchconfig', kubeconfig])).to.deep.include({ code: 0, stdout: warning, stderr: '' });
      expect(await runCli('meshctl', ['x', 'precheck', '--output-threshold', 'info', '--orchconfig', kubeconfig])).to.deep.include({ code: 0, stdout: warning + info });
      expect(await runCli('meshctl', ['x', 'precheck', '--output-threshold', 'Error', '--orchconfig', kubeconfig])).to.deep.include({ code: 0, stdout: '', stderr: SAFE });
      // -r: only that revision's control plane counts.
      const other = await runCli('meshctl', ['x', 'precheck', '-r', 'stable', '-f', '0.1', '--orchconfig', kubeconfig]);
      expect(other.code).to.equal(1);
      expect(other.stdout).to.contain('Error [MSH0902] (Cluster) --from-version 0.1 was given, but no control plane of revision stable is installed in namespace mesh-system.\n');
      const bad = await runCli('meshctl', ['x', 'precheck', '--from-version', 'one', '--orchconfig', kubeconfig]);
      expect([bad.code, bad.stdout, bad.stderr.trim()]).to.deep.equal([1, '', 'Error: --from-version: invalid version "one", expected a form like 1.0']);
    });
  });
});

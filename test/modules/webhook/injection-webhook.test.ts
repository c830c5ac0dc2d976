import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CoreV1Api, V1Pod } from '@kubernetes/client-node';
import { parse, parseAllDocuments } from 'yaml';
import { admissionReview, decodedPatch, postAdmission } from '../../helpers/admission';
import { RunningDaemon, startDaemon } from '../../helpers/daemon';
import { httpGet, metricValue } from '../../helpers/http';
import { OrchApiServer, startOrchApiServer } from '../../helpers/orch-api';
import { runCli } from '../../helpers/run-cli';
import { applyJsonPatch } from '../../../src/modules/inject';

const SYSTEM = 'mesh-system';
const SETTINGS = '/work/shared/conformance/inject/settings';
const CONFORMANCE = '/work/shared/conformance/inject';
const injectConfig = () => fs.readFileSync(path.join(SETTINGS, 'inject-config.yaml'), 'utf8');
const injectValues = () => fs.readFileSync(path.join(SETTINGS, 'values.json'), 'utf8');
const meshYaml = () => fs.readFileSync(path.join(SETTINGS, 'mesh.yaml'), 'utf8');

async function eventually(check: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The conformance case's pod, in `namespace`. */
function helloPod(namespace: string, name = 'hellopod'): V1Pod {
  const pod = parse(fs.readFileSync(path.join(CONFORMANCE, 'pod.yaml'), 'utf8')) as V1Pod;
  return { ...pod, metadata: { ...pod.metadata, name, namespace } };
}

type Container = { name: string; image?: string; env?: Array<{ name: string; value?: string }> };
const containerNames = (pod: { spec?: { containers?: Container[]; initContainers?: Container[] } }) => [
  ...(pod.spec?.initContainers ?? []).map((c) => c.name),
  ...(pod.spec?.containers ?? []).map((c) => c.name),
];
const proxyOf = (pod: { spec?: { containers?: Container[]; initContainers?: Container[] } }) =>
  [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])].find((c) => c.name === 'mesh-proxy')!;

/** The pod as stored, without what the server writes of its own (identity, timestamps, status, scheduling). */
function comparable(pod: Record<string, any>): Record<string, unknown> {
  const { uid, resourceVersion, creationTimestamp, managedFields, generation, name, ...metadata } = pod.metadata;
  void [uid, resourceVersion, creationTimestamp, managedFields, generation, name];
  const annotations = Object.fromEntries(Object.entries(metadata.annotations ?? {}).filter(([k]) => !k.startsWith('test.orch/')));
  const { nodeName, ...spec } = pod.spec;
  void nodeName;
  return { metadata: { ...metadata, annotations }, spec };
}

describe('injection webhook (/inject on the HTTPS address)', function () {
  this.timeout(60_000);

  describe('on the orchestrator, with the injector ConfigMap', () => {
    let server: OrchApiServer;
    let daemon: RunningDaemon;
    let ca: string;
    let dir: string;

    before(async () => {
      server = await startOrchApiServer({ bookmarkIntervalMs: 200 });
      await server.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: SYSTEM } });
      await server.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop', labels: { 'mesh-injection': 'enabled' } } });
      await server.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'plain' } });
      await server.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'mesh-sidecar-injector', namespace: SYSTEM }, data: { config: injectConfig(), values: injectValues() } });
      await server.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'mesh', namespace: SYSTEM }, data: { mesh: meshYaml() } });
      // As installed: no caBundle yet; the daemon fills it in.
      await server.create({
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'MutatingWebhookConfiguration',
        metadata: { name: 'mesh-sidecar-injector' },
        webhooks: [
          {
            name: 'namespace.sidecar-injector.mesh.io',
            clientConfig: { service: { namespace: SYSTEM, name: 'meshd', path: '/inject', port: 443 } },
            rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['pods'] }],
            namespaceSelector: { matchLabels: { 'mesh-injection': 'enabled' } },
            sideEffects: 'None',
            admissionReviewVersions: ['v1', 'v1beta1'],
            failurePolicy: 'Fail',
            reinvocationPolicy: 'Never',
          },
        ],
      });
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-inject-'));
      daemon = await startDaemon(['--orchconfig', server.writeKubeconfigFile(dir)], { POD_NAME: 'meshd-0' });
      ca = daemon.rootCertPem();
      server.serviceEndpoints.set(`${SYSTEM}/meshd`, `https://127.0.0.1:${daemon.httpsPort}`);
    });

    after(async () => {
      await daemon?.stop();
      await server?.stop();
    });

    const post = (body: unknown, pathname = '/inject') => postAdmission(daemon.httpsPort, ca, pathname, JSON.stringify(body));

    it('answers an AdmissionReview for a pod of a labelled namespace with a JSON patch that injects it', async () => {
      const pod = helloPod('shop');
      const review = admissionReview(pod as Record<string, unknown>, { resource: { group: '', version: 'v1', resource: 'pods' } });
      const res = await post(review);
      expect(res.status, res.body).to.equal(200);
      const response = res.review!.response;
      expect(response.uid).to.equal((review.request as { uid: string }).uid);
      expect(response.allowed).to.equal(true);
      expect(response.patchType).to.equal('JSONPatch');
      const injected = applyJsonPatch(pod, decodedPatch(response) as never) as V1Pod;
      expect(containerNames(injected)).to.have.members(['mesh-init', 'mesh-proxy', 'hello']);
      expect(injected.metadata!.annotations!['sidecar.mesh.io/status']).to.be.a('string');
      expect(proxyOf(injected).image).to.equal('registry.mesh.io/testing/proxyv2:latest');
    });

    it('leaves a pod of an unlabelled namespace alone, and a pod that opts out', async () => {
      const res = await post(admissionReview(helloPod('plain') as Record<string, unknown>));
      expect(res.review!.response.allowed).to.equal(true);
      expect(res.review!.response.patch).to.equal(undefined);
      const optOut = helloPod('shop');
      optOut.metadata!.labels = { 'sidecar.mesh.io/inject': 'false' };
      const out = await post(admissionReview(optOut as Record<string, unknown>));
      expect(out.review!.response.allowed).to.equal(true);
      expect(out.review!.response.patch).to.equal(undefined);
    });

    it('takes the cluster and network from the path, as the incumbent does', async () => {
      const pod = helloPod('shop');
      const res = await post(admissionReview(pod as Record<string, unknown>), '/inject/cluster/east/net/net--slash--1');
      const injected = applyJsonPatch(pod, decodedPatch(res.review!.response) as never) as V1Pod;
      const env = Object.fromEntries((proxyOf(injected).env ?? []).map((e) => [e.name, e.value]));
      expect(env.MESH_META_CLUSTER_ID).to.equal('east');
      expect(env.MESH_META_NETWORK).to.equal('net/1');
    });

    it('answers malformed requests with an HTTP error, refuses an absurdly nested pod, and counts every request', async () => {
      expect((await postAdmission(daemon.httpsPort, ca, '/inject', 'not json')).status).to.equal(400);
      expect((await post({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' })).status).to.equal(400);
      // A pod nested beyond any real one is refused, not walked.
      const review = JSON.stringify(admissionReview({ ...helloPod('shop'), spec: { containers: [{ name: 'x', image: 'NESTED' }] } } as Record<string, unknown>));
      const deep = await postAdmission(daemon.httpsPort, ca, '/inject', review.replace('"NESTED"', '{"a":'.repeat(5000) + '1' + '}'.repeat(5000)));
      expect(deep.review!.response.allowed).to.equal(false);
      expect(deep.review!.response.status!.message).to.equal('cannot inject the pod: nested more than 100 levels deep');
      const metrics = (await httpGet(daemon.monitoringPort, '/metrics')).body;
      expect(metricValue(metrics, 'sidecar_injection_requests_total')).to.equal(7);
      expect(metricValue(metrics, 'sidecar_injection_success_total')).to.equal(2);
      expect(metricValue(metrics, 'sidecar_injection_skip_total')).to.equal(2);
      expect(metricValue(metrics, 'sidecar_injection_failure_total')).to.equal(3);
      expect(metricValue(metrics, 'sidecar_injection_time_seconds_count')).to.equal(7);
    });

    it('a pod created through the API server comes back injected, equal to what meshctl orch-inject prints for it', async () => {
      await eventually(() => Boolean(server.get('admissionregistration.k8s.io/v1', 'MutatingWebhookConfiguration', undefined, 'mesh-sidecar-injector').webhooks[0].clientConfig.caBundle), 10_000, 'the caBundle');
      const api = server.kubeConfig().makeApiClient(CoreV1Api);
      const created = await api.createNamespacedPod({ namespace: 'shop', body: helloPod('shop') });
      expect(containerNames(created)).to.have.members(['mesh-init', 'mesh-proxy', 'hello']);
      expect(server.webhookCalls.some((c) => c.webhook === 'namespace.sidecar-injector.mesh.io' && c.allowed === true)).to.equal(true);

      // The same pod through the command, with the same config, values and mesh config.
      const input = path.join(dir, 'hellopod.yaml');
      fs.writeFileSync(input, JSON.stringify(helloPod('shop')));
      const cli = await runCli('meshctl', ['orch-inject', '-f', input, '--injectConfigFile', path.join(SETTINGS, 'inject-config.yaml'), '--valuesFile', path.join(SETTINGS, 'values.json'), '--meshConfigFile', path.join(SETTINGS, 'mesh.yaml')]);
      expect(cli.code, cli.stderr).to.equal(0);
      const printed = parseAllDocuments(cli.stdout).map((d) => d.toJS()).find(Boolean) as V1Pod;
      // Stored as the API server stores any pod (its defaults applied), beside the webhook's, without admission.
      const stored = await server.create({ ...printed, metadata: { ...printed.metadata, name: 'hellopod-cli', namespace: 'shop' } });
      const fromWebhook = await api.readNamespacedPod({ name: 'hellopod', namespace: 'shop' });
      expect(comparable(JSON.parse(JSON.stringify(fromWebhook)))).to.deep.equal(comparable(stored));
    });

    it('follows ConfigMap changes, and keeps injecting with the last good config when a change is broken', async () => {
      const cm = server.get('v1', 'ConfigMap', SYSTEM, 'mesh-sidecar-injector');
      const values = JSON.parse(cm.data.values);
      values.global.tag = 'next';
      await server.update({ ...cm, data: { ...cm.data, values: JSON.stringify(values) } });
      const image = async () => {
        const pod = helloPod('shop');
        const res = await post(admissionReview(pod as Record<string, unknown>));
        return proxyOf(applyJsonPatch(pod, decodedPatch(res.review!.response) as never) as V1Pod).image;
      };
      await eventually(async () => (await image()) === 'registry.mesh.io/testing/proxyv2:next', 5000, 'the new tag');
      const current = server.get('v1', 'ConfigMap', SYSTEM, 'mesh-sidecar-injector');
      await server.update({ ...current, data: { ...current.data, config: 'policy: [unterminated' } });
      await eventually(() => daemon.output().includes('injection config refused, injecting with the last good one: ConfigMap mesh-system/mesh-sidecar-injector key config'), 5000, 'the refusal logged');
      expect(await image()).to.equal('registry.mesh.io/testing/proxyv2:next');
    });
  });

  describe('without the orchestrator', () => {
    it('reads the injection config from the injection directory', async () => {
      const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-inject-files-'));
      const injectDir = path.join(workDir, 'var', 'lib', 'mesh', 'inject');
      fs.mkdirSync(injectDir, { recursive: true });
      // No orchestrator to read namespace labels from: namespaces are enabled by default.
      const values = JSON.parse(injectValues());
      values.sidecarInjectorWebhook = { ...(values.sidecarInjectorWebhook ?? {}), enableNamespacesByDefault: true };
      fs.writeFileSync(path.join(injectDir, 'config'), injectConfig());
      fs.writeFileSync(path.join(injectDir, 'values'), JSON.stringify(values));
      const configDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-inject-cfg-'));
      const daemon = await startDaemon(['--configDir', configDir], {}, { workDir });
      try {
        const pod = helloPod('shop');
        const res = await postAdmission(daemon.httpsPort, daemon.rootCertPem(), '/inject', JSON.stringify(admissionReview(pod as Record<string, unknown>)));
        expect(res.review!.response.allowed).to.equal(true);
        const injected = applyJsonPatch(pod, decodedPatch(res.review!.response) as never) as V1Pod;
        expect(containerNames(injected)).to.have.members(['mesh-init', 'mesh-proxy', 'hello']);
      } finally {
        await daemon.stop();
      }
    });

    it('with no injection config, refuses injection saying what is missing', async () => {
      const daemon = await startDaemon(['--configDir', fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-inject-none-'))]);
      try {
        const res = await postAdmission(daemon.httpsPort, daemon.rootCertPem(), '/inject', JSON.stringify(admissionReview(helloPod('shop') as Record<string, unknown>)));
        expect(res.review!.response.allowed).to.equal(false);
        expect(res.review!.response.status!.message).to.match(/injection config not ready: no injection config: .*var\/lib\/mesh\/inject\/config does not exist and no orchestrator is configured/);
      } finally {
        await daemon.stop();
      }
    });

    it('INJECT_ENABLED=false serves no injection webhook', async () => {
      const daemon = await startDaemon(['--configDir', fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-inject-off-'))], { INJECT_ENABLED: 'false' });
      try {
        const res = await postAdmission(daemon.httpsPort, daemon.rootCertPem(), '/inject', JSON.stringify(admissionReview(helloPod('shop') as Record<string, unknown>)));
        expect(res.status).to.equal(404);
        expect(daemon.output()).to.contain('INJECT_ENABLED=false');
      } finally {
        await daemon.stop();
      }
    });
  });
});

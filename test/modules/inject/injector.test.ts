import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { applyJsonPatch, canonicalQuantity, injectionPatch, InjectionConfigError, InjectionInputs, namespaceDecision, podDecision, Pod, SidecarInjector } from '../../../src/modules/inject';
import { Settings } from '../../../src/modules/settings';
import { REPO_ROOT } from '../../helpers/run-cli';

const FIXTURES = path.join(REPO_ROOT, 'test', 'fixtures', 'inject');
const pod = (labels: Record<string, string> = {}, annotations: Record<string, string> = {}, hostNetwork = false): Pod => ({
  metadata: { name: 'p', namespace: 'app', labels, annotations },
  spec: { hostNetwork, containers: [{ name: 'app', image: 'app:1', ports: [{ name: 'http', containerPort: 8080 }], readinessProbe: { httpGet: { port: 'http', path: '/ready' } } }] },
});

describe('inject: the injection decision', () => {
  const config = { policy: 'enabled', neverInjectSelector: [], alwaysInjectSelector: [] };

  it('follows the pod label (which wins over the annotation), host networking and system namespaces', () => {
    expect(podDecision(config, pod(), 'app')).to.deep.equal({ inject: true });
    expect(podDecision(config, pod({}, { 'sidecar.mesh.io/inject': 'false' }), 'app').inject).to.equal(false);
    expect(podDecision(config, pod({ 'sidecar.mesh.io/inject': 'true' }, { 'sidecar.mesh.io/inject': 'false' }), 'app').inject).to.equal(true);
    expect(podDecision(config, pod({}, {}, true), 'app')).to.deep.equal({ inject: false, reason: 'the pod uses host networking' });
    expect(podDecision(config, pod(), 'kube-system').inject).to.equal(false);
  });

  it('applies the policy and the never/always selectors', () => {
    const disabled = { ...config, policy: 'disabled' };
    expect(podDecision(disabled, pod(), 'app').inject).to.equal(false);
    expect(podDecision(disabled, pod({ 'sidecar.mesh.io/inject': 'true' }), 'app').inject).to.equal(true);
    const never = { ...config, neverInjectSelector: [{ matchLabels: { tier: 'db' } }] };
    expect(podDecision(never, pod({ tier: 'db' }), 'app').inject).to.equal(false);
    const always = { ...disabled, alwaysInjectSelector: [{ matchExpressions: [{ key: 'tier', operator: 'In', values: ['web'] }] }] };
    expect(podDecision(always, pod({ tier: 'web' }), 'app').inject).to.equal(true);
    expect(podDecision({ ...config, policy: 'sometimes' }, pod(), 'app').inject).to.equal(false);
  });

  it('selects the namespace by mesh-injection or mesh.io/rev', () => {
    const ns = (labels: Record<string, string>) => ({ name: 'app', labels });
    expect(namespaceDecision(ns({ 'mesh-injection': 'enabled' }), pod(), '', false).inject).to.equal(true);
    expect(namespaceDecision(ns({ 'mesh-injection': 'disabled' }), pod(), '', true).inject).to.equal(false);
    expect(namespaceDecision(ns({ 'mesh-injection': 'enabled' }), pod(), 'canary', false).inject).to.equal(false);
    expect(namespaceDecision(ns({ 'mesh.io/rev': 'canary' }), pod(), 'canary', false).inject).to.equal(true);
    expect(namespaceDecision(ns({ 'mesh.io/rev': 'canary' }), pod(), '', false).inject).to.equal(false);
    expect(namespaceDecision(ns({}), pod(), '', false).inject).to.equal(false);
    expect(namespaceDecision(ns({}), pod({ 'sidecar.mesh.io/inject': 'true' }), '', false).inject).to.equal(true);
    expect(namespaceDecision(ns({}), pod(), '', true).inject).to.equal(true);
  });
});

describe('inject: SidecarInjector (the webhook entry) and its JSON patch', () => {
  const injector = new SidecarInjector(new Settings('pilot-discovery', { ENABLE_NATIVE_SIDECARS: 'true' }), {});
  let inputs: InjectionInputs;
  before(() => {
    inputs = injector.loadInputs({
      config: fs.readFileSync(path.join(FIXTURES, 'settings', 'inject-config.yaml'), 'utf8'),
      values: fs.readFileSync(path.join(FIXTURES, 'settings', 'values.json'), 'utf8'),
      mesh: fs.readFileSync(path.join(FIXTURES, 'settings', 'mesh.yaml'), 'utf8'),
      where: { config: 'config', values: 'values', mesh: 'mesh' },
    });
  });

  it('injects an admitted pod: native proxy, probes rewritten with the originals in MESH_ORCH_APP_PROBERS', () => {
    const original = pod({}, {});
    const outcome = injector.injectAdmittedPod(original, { name: 'app', labels: { 'mesh-injection': 'enabled' } }, inputs);
    if (outcome.kind !== 'injected') throw new Error(outcome.reason);
    const spec = outcome.pod.spec!;
    expect(spec.initContainers!.map((c) => c.name)).to.deep.equal(['mesh-init', 'mesh-proxy']);
    expect(spec.initContainers![1].restartPolicy).to.equal('Always');
    expect(spec.containers![0].readinessProbe).to.deep.equal({ httpGet: { port: 15020, path: '/app-health/app/readyz' } });
    const probers = spec.initContainers![1].env!.find((e) => e.name === 'MESH_ORCH_APP_PROBERS');
    expect(probers?.value).to.equal('{"/app-health/app/readyz":{"httpGet":{"path":"/ready","port":8080}}}');
    expect(outcome.pod.metadata!.annotations!['sidecar.mesh.io/status']).to.match(/"revision":"default"/);
    // The patch turns the admitted pod into the injected one.
    const patch = injectionPatch(original, outcome.pod);
    expect(applyJsonPatch(original, patch)).to.deep.equal(outcome.pod);
    expect(patch.every((op) => op.path.startsWith('/'))).to.equal(true);
  });

  it('re-injects idempotently: injecting the injected pod again gives the same pod', () => {
    const ns = { name: 'app', labels: { 'mesh-injection': 'enabled' } };
    const once = injector.injectAdmittedPod(pod(), ns, inputs);
    if (once.kind !== 'injected') throw new Error(once.reason);
    const twice = injector.injectAdmittedPod(once.pod, ns, inputs);
    if (twice.kind !== 'injected') throw new Error(twice.reason);
    expect(twice.pod).to.deep.equal(once.pod);
  });

  it('skips with the reason, and fails on a bad traffic annotation naming it', () => {
    const skipped = injector.injectAdmittedPod(pod(), { name: 'app', labels: {} }, inputs);
    expect(skipped).to.deep.include({ kind: 'skipped' });
    const bad = pod({}, { 'traffic.sidecar.mesh.io/excludeInboundPorts': 'eighty' });
    expect(() => injector.injectAdmittedPod(bad, { name: 'app', labels: { 'mesh-injection': 'enabled' } }, inputs)).to.throw(
      InjectionConfigError,
      /annotation 'traffic\.sidecar\.mesh\.io\/excludeInboundPorts': excludeInboundPorts invalid/,
    );
  });

  it('names a template that fails to parse, with its line', () => {
    expect(() =>
      injector.loadInputs({ config: 'templates:\n  broken: |\n    ok\n    {{ if }}\n', values: '{}', where: { config: 'cfg', values: 'v', mesh: 'm' } }),
    ).to.throw(InjectionConfigError, /cfg: templates\.broken: template: broken:2: missing value for if/);
  });
});

describe('inject: canonical quantities', () => {
  it('writes quantities as the orchestrator does', () => {
    const cases: [string, string][] = [
      ['2000m', '2'],
      ['1024Mi', '1Gi'],
      ['100m', '100m'],
      ['128Mi', '128Mi'],
      ['0.5', '500m'],
      ['1000', '1k'],
      ['1500', '1500'],
      ['1.5Gi', '1536Mi'],
      ['512Ki', '512Ki'],
      ['0.5Ki', '512'],
      ['1e3', '1e3'],
      ['0', '0'],
    ];
    for (const [input, want] of cases) expect(canonicalQuantity(input), input).to.equal(want);
  });
});

import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseAllDocuments, parse } from 'yaml';
import { cniPaths, defaultManifestsDir, manifestYaml, platformOfVersion, renderManifest, resolveOperator, splitSetPath, translateValues } from '../../../src/modules/install';
import { startOrchApiServer } from '../../helpers/orch-api';
import { parseInjectionConfig, parseValues } from '../../../src/modules/inject';
import { templateFuncs } from '../../../src/modules/inject/funcs';
import { runCli } from '../../helpers/run-cli';

const dir = defaultManifestsDir();
const render = (sets: string[], files: string[] = [], extra: { revision?: string; force?: boolean } = {}) => renderManifest(resolveOperator({ sets, files, manifestsDir: dir, ...extra }).spec, dir);
const kinds = (objs: { kind: string }[]) => objs.map((o) => o.kind);

describe('install: the operator resource and the manifest it renders', () => {
  let tmp: string;
  before(() => (tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-install-'))));
  after(() => fs.rmSync(tmp, { recursive: true, force: true }));
  const file = (name: string, text: string) => {
    const p = path.join(tmp, name);
    fs.writeFileSync(p, text);
    return p;
  };

  it('the default profile renders CRDs, namespace, RBAC, config, workloads and webhooks in that order, all labelled', () => {
    const objs = render([]);
    const order = [...new Set(kinds(objs))];
    expect(order).to.deep.equal(['CustomResourceDefinition', 'Namespace', 'ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'ConfigMap', 'Service', 'Deployment', 'MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration']);
    for (const o of objs) expect(o.metadata.labels?.['app.kubernetes.io/part-of'], `${o.kind} ${o.metadata.name}`).to.equal('mesh');
    const deploy = objs.find((o) => o.kind === 'Deployment') as any;
    expect(deploy.metadata).to.include({ name: 'meshd', namespace: 'mesh-system' });
    expect(deploy.metadata.labels['mesh.io/rev']).to.equal('default');
    const container = deploy.spec.template.spec.containers[0];
    expect(container.args[0]).to.equal('discovery');
    expect(container.ports.map((p: any) => p.containerPort)).to.deep.equal([15010, 15012, 15014, 15017, 8080]);
    expect(container.readinessProbe.httpGet).to.deep.equal({ path: '/ready', port: 8080 });
    const svc = objs.find((o) => o.kind === 'Service') as any;
    expect(svc.spec.ports.map((p: any) => p.port)).to.deep.equal([15010, 15012, 15014, 15017, 8080]);
    expect(objs.filter((o) => o.kind === 'ConfigMap').map((o) => o.metadata.name)).to.deep.equal(['mesh', 'mesh-sidecar-injector']);
    expect(kinds(objs)).to.not.include('DaemonSet');
  });

  it('the injector ConfigMap is what the injection webhook loads: its config and values parse with the injector\'s own parsers', () => {
    const cm = render(['profile=demo']).find((o) => o.kind === 'ConfigMap' && o.metadata.name === 'mesh-sidecar-injector') as any;
    const config = parseInjectionConfig(cm.data.config, 'mesh-sidecar-injector/config', templateFuncs(() => undefined));
    expect(config.policy).to.equal('enabled');
    expect(config.defaultTemplates).to.deep.equal(['sidecar']);
    expect([...config.templates.keys()]).to.include('sidecar');
    expect((parseValues(cm.data.values, 'mesh-sidecar-injector/values') as any).global.hub).to.equal('docker.io/meshproject');
  });

  it('--set reaches the mesh config, component switches and values; escaped dots stay in the key', () => {
    const objs = render(['profile=demo', 'components.cni.enabled=true', 'meshConfig.accessLogFile=/tmp/access.log', 'values.global.podAnnotations.a\\.b/c=x']);
    const mesh = parse((objs.find((o) => o.metadata.name === 'mesh') as any).data.mesh);
    expect(mesh.accessLogFile).to.equal('/tmp/access.log');
    expect(mesh.defaultConfig.tracing.sampling).to.equal(100); // from the demo profile
    expect(kinds(objs)).to.include('DaemonSet');
    expect((render(['values.global.logAsJson=true']).find((o) => o.kind === 'Deployment') as any).spec.template.spec.containers[0].args).to.include('--log_as_json');
    const values = JSON.parse((objs.find((o) => o.metadata.name === 'mesh-sidecar-injector') as any).data.values);
    expect(values.global.podAnnotations).to.deep.equal({ 'a.b/c': 'x' });
    expect(splitSetPath('a.b\\.c.d')).to.deep.equal(['a', 'b.c', 'd']);
  });

  it('-f files overlay the profile left to right, then --set', () => {
    const a = file('a.yaml', 'apiVersion: install.mesh.io/v1alpha1\nkind: MeshOperator\nspec:\n  profile: minimal\n  hub: a.example/mesh\n  tag: "1.0"\n');
    const b = file('b.yaml', 'apiVersion: install.mesh.io/v1alpha1\nkind: MeshOperator\nspec:\n  tag: "2.0"\n  components:\n    pilot:\n      k8s:\n        replicaCount: 3\n');
    const { spec } = resolveOperator({ files: [a, b], sets: ['tag=3.0'], manifestsDir: dir });
    expect(spec).to.include({ profile: 'minimal', hub: 'a.example/mesh', tag: '3.0' });
    expect(spec.components.pilot.k8s.replicaCount).to.equal(3);
    const deploy = renderManifest(spec, dir).find((o) => o.kind === 'Deployment') as any;
    expect(deploy.spec.template.spec.containers[0].image).to.equal('a.example/mesh/pilot:3.0');
  });

  it('--revision suffixes names and labels mesh.io/rev, leaving the shared CRDs and namespace unlabelled by revision', () => {
    const objs = render([], [], { revision: 'canary' });
    const names = objs.filter((o) => o.kind !== 'CustomResourceDefinition').map((o) => `${o.kind}/${o.metadata.name}`);
    expect(names).to.include.members(['Deployment/meshd-canary', 'Service/meshd-canary', 'ConfigMap/mesh-canary', 'ConfigMap/mesh-sidecar-injector-canary', 'MutatingWebhookConfiguration/mesh-sidecar-injector-canary']);
    for (const o of objs) {
      const shared = o.kind === 'CustomResourceDefinition' || o.kind === 'Namespace';
      expect(o.metadata.labels?.['mesh.io/rev'], o.metadata.name).to.equal(shared ? undefined : 'canary');
    }
  });

  it('profiles: empty renders nothing, remote needs the remote address and renders no Deployment', () => {
    expect(render(['profile=empty'])).to.deep.equal([]);
    expect(() => render(['profile=remote'])).to.throw(/values.global.remotePilotAddress/);
    const remote = render(['profile=remote', 'values.global.remotePilotAddress=10.0.0.9']);
    expect(kinds(remote)).to.not.include('Deployment');
    const hook = remote.find((o) => o.kind === 'MutatingWebhookConfiguration') as any;
    expect(hook.webhooks[0].clientConfig.url).to.equal('https://10.0.0.9:15017/inject');
    expect(() => render(['profile=nope'])).to.throw(/profile "nope" not found.*built in: default, demo, minimal, remote, empty/);
  });

  it('validation names the file or --set and the field, and stops unless --force', () => {
    const bad = file('bad.yaml', 'apiVersion: install.mesh.io/v1alpha1\nkind: MeshOperator\nspec:\n  components:\n    pilot:\n      enabled: "yes"\n  hubb: x\n');
    expect(() => resolveOperator({ files: [bad], manifestsDir: dir })).to.throw(/bad\.yaml: spec\.components\.pilot\.enabled must be a boolean, not string "yes".*bad\.yaml: unknown field spec\.hubb/);
    expect(resolveOperator({ sets: ['tag=1.20'], manifestsDir: dir }).spec.tag).to.equal('1.20');
    expect(() => resolveOperator({ sets: ['components.pilot.k8s.replicaCount=two'], manifestsDir: dir })).to.throw(/--set components.pilot.k8s.replicaCount=two: spec.components.pilot.k8s.replicaCount must be an integer/);
    const forced = resolveOperator({ files: [bad], manifestsDir: dir, force: true });
    expect(forced.warnings).to.have.length(2);
    expect(() => resolveOperator({ files: [file('k.yaml', 'kind: Deployment\n')], manifestsDir: dir })).to.throw(/k\.yaml: kind "Deployment" is not MeshOperator/);
  });

  it('hostile files: aliases bombs, non-mappings and huge files are clear errors', () => {
    const bomb = file('bomb.yaml', 'a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: [*d, *d, *d, *d, *d, *d, *d, *d, *d]\n');
    expect(() => resolveOperator({ files: [bomb], manifestsDir: dir })).to.throw(/bomb\.yaml/);
    expect(() => resolveOperator({ files: [file('list.yaml', '- 1\n')], manifestsDir: dir })).to.throw(/list\.yaml: must be a MeshOperator resource/);
    const huge = path.join(tmp, 'huge.yaml');
    fs.writeFileSync(huge, 'x'.repeat(2 * 1024 * 1024));
    expect(() => resolveOperator({ files: [huge], manifestsDir: dir })).to.throw(/too large/);
    expect(() => resolveOperator({ files: [path.join(tmp, 'missing.yaml')], manifestsDir: dir })).to.throw(/cannot read .*missing\.yaml/);
  });

  it('translate gives the values the renderer uses', () => {
    const values = translateValues(resolveOperator({ sets: ['profile=demo', 'hub=h.example'], revision: 'r1', manifestsDir: dir }).spec) as any;
    expect(values.global).to.include({ hub: 'h.example', meshNamespace: 'mesh-system' });
    expect(values).to.include({ revision: 'r1', profile: 'demo' });
    expect(values.pilot.enabled).to.equal(true);
  });

  it('meshctl manifest generate prints the YAML stream; manifest translate -o writes values.yaml into a directory', async function () {
    this.timeout(90_000);
    const gen = await runCli('meshctl', ['manifest', 'generate', '--set', 'profile=demo']);
    expect(gen.code, gen.stderr).to.equal(0);
    const docs = parseAllDocuments(gen.stdout).map((d) => (d as any).toJS());
    expect(gen.stdout).to.equal(manifestYaml(render(['profile=demo'])));
    expect(docs.at(-1).kind).to.equal('ValidatingWebhookConfiguration');
    const bad = await runCli('meshctl', ['manifest', 'generate', '--set', 'components.cni.enabled=3']);
    expect(bad.code).to.equal(1);
    expect(bad.stderr).to.match(/--set components\.cni\.enabled=3: spec\.components\.cni\.enabled must be a boolean/);
    const forced = await runCli('meshctl', ['manifest', 'generate', '--set', 'hubx=3', '--force']);
    expect(forced.code, forced.stderr).to.equal(0);
    expect(forced.stderr).to.match(/warning \(--force\).*unknown field spec\.hubx/);
    const tr = await runCli('meshctl', ['manifest', 'translate', '--set', 'profile=minimal', '-o', tmp]);
    expect(tr.code, tr.stderr).to.equal(0);
    expect(parse(fs.readFileSync(path.join(tmp, 'values.yaml'), 'utf8')).profile).to.equal('minimal');
  });

  it('node paths of the node plugin follow the platform: values first, then what the cluster\'s version names, then the defaults', () => {
    expect(platformOfVersion('v1.30.2-gke.1000')).to.equal('gke');
    expect(platformOfVersion('v1.31.1+k3s1')).to.equal('k3s');
    expect(platformOfVersion('v1.32.0')).to.equal(undefined);
    const spec = (sets: string[]) => resolveOperator({ sets, manifestsDir: dir }).spec;
    expect(cniPaths(spec([]))).to.deep.equal({ binDir: '/opt/cni/bin', confDir: '/etc/cni/net.d' });
    expect(cniPaths(spec(['values.global.platform=k3s']))).to.deep.equal({ binDir: '/var/lib/rancher/k3s/data/current/bin', confDir: '/var/lib/rancher/k3s/agent/etc/cni/net.d' });
    expect(cniPaths(spec(['values.global.platform=gke', 'values.cni.cniBinDir=/x/bin']))).to.deep.equal({ binDir: '/x/bin', confDir: '/etc/cni/net.d' });
  });

  it('manifest generate --cluster-specific reads the platform from the cluster; a platform in the values wins; an unreachable cluster is an error', async function () {
    this.timeout(90_000);
    const server = await startOrchApiServer({ serverVersion: 'v1.30.2-gke.1000' });
    try {
      const kubeconfig = server.writeKubeconfigFile(tmp);
      const hostPaths = (stdout: string) =>
        parseAllDocuments(stdout)
          .map((d) => d.toJS() as { kind: string; spec?: { template: { spec: { volumes: { hostPath: { path: string } }[] } } } })
          .filter((o) => o.kind === 'DaemonSet')
          .flatMap((o) => o.spec!.template.spec.volumes.map((v) => v.hostPath.path));
      const detected = await runCli('meshctl', ['manifest', 'generate', '--cluster-specific', '--set', 'components.cni.enabled=true', '--orchconfig', kubeconfig]);
      expect(detected.code, detected.stderr).to.equal(0);
      expect(hostPaths(detected.stdout)).to.deep.equal(['/home/kubernetes/bin', '/etc/cni/net.d']);
      const chosen = await runCli('meshctl', ['manifest', 'generate', '--cluster-specific', '--set', 'components.cni.enabled=true', '--set', 'values.global.platform=k3s', '--orchconfig', kubeconfig]);
      expect(hostPaths(chosen.stdout)).to.deep.equal(['/var/lib/rancher/k3s/data/current/bin', '/var/lib/rancher/k3s/agent/etc/cni/net.d']);
      await server.stop();
      const gone = await runCli('meshctl', ['manifest', 'generate', '--cluster-specific', '--orchconfig', kubeconfig]);
      expect(gone.code).to.not.equal(0);
      expect(gone.stdout).to.equal('');
    } finally {
      await server.stop();
    }
  });
});

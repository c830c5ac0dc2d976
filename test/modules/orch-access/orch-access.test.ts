import * as fs from 'node:fs';
import * as k8s from '@kubernetes/client-node';
import { expect } from 'chai';
import { OrchConfigError } from '../../../src/modules/orch';
import { meshctlOrchOptions, OrchAccess, parsePodTarget } from '../../../src/modules/orch-access';
import { UserError } from '../../../src/modules/shared/user-error';
import { OrchApiServer, startOrchApiServer } from '../../helpers/orch-api';
import { runPod } from '../../helpers/orch-mesh';
import { failureOf, kubeconfigOf, meshctlOrchAccess, until } from './support';

describe('orch-access: OrchAccess (namespace, resolvePod, podsBySelector) and meshctl identity', function () {
  this.timeout(30_000);
  let server: OrchApiServer;
  let access: OrchAccess;
  let kubeconfig: string;
  let cleanup: () => void;

  before(async () => {
    server = await startOrchApiServer({ simulateCluster: false });
    ({ file: kubeconfig, cleanup } = kubeconfigOf(server));
    access = meshctlOrchAccess({ orchconfig: kubeconfig });
    await runPod(server, { name: 'web', namespace: 'default' });
    await runPod(server, { name: 'web', namespace: 'other' });
    // Deployment app in default: a not-ready pod sorting first, a ready one, a pending one.
    await runPod(server, { name: 'app-1', deployment: 'app', labels: { app: 'app' }, ready: false });
    await runPod(server, { name: 'app-2', deployment: 'app', labels: { app: 'app' } });
    await runPod(server, { name: 'app-0', deployment: 'app', labels: { app: 'app' }, phase: 'Pending' });
    await runPod(server, { name: 'db-1', namespace: 'other', deployment: 'db' });
    await runPod(server, { name: 'idle-1', deployment: 'idle', phase: 'Pending' });
  });
  after(async () => {
    await access.close();
    await server.stop();
    cleanup();
  });

  it('namespace: -n, else the context namespace, else default', async () => {
    expect(access.namespace('given')).to.equal('given');
    expect(access.namespace('')).to.equal('default');
    expect(access.namespace()).to.equal('default');
    const withNs = kubeconfig.replace(/\.kubeconfig$/, '-ns.kubeconfig');
    fs.writeFileSync(withNs, fs.readFileSync(kubeconfig, 'utf8').replace('    user: orch-test\n', '    user: orch-test\n    namespace: from-context\n'));
    const other = meshctlOrchAccess({ orchconfig: withNs });
    expect(other.namespace()).to.equal('from-context');
    expect(other.namespace('flag-wins')).to.equal('flag-wins');
    await other.close();
    expect(() => access.namespace('Not_A_Namespace')).to.throw(UserError, /"Not_A_Namespace" is not a valid namespace name/);
  });

  it('resolvePod: every form of the argument', async () => {
    const where = async (target: string, ns = 'default') => {
      const pod = await access.resolvePod(target, ns);
      return `${pod.metadata!.namespace}/${pod.metadata!.name}`;
    };
    expect(await where('web')).to.equal('default/web');
    expect(await where('web', 'other')).to.equal('other/web');
    expect(await where('web.other')).to.equal('other/web');
    expect(await where('pod/web')).to.equal('default/web');
    expect(await where('pods/web.other')).to.equal('other/web');
    expect(await where('po/web.default', 'other')).to.equal('default/web');
    expect(await where('deployment/app')).to.equal('default/app-2');
    expect(await where('deploy/app.default', 'other')).to.equal('default/app-2');
    expect(await where('deployments/db.other')).to.equal('other/db-1');
    expect(await where('deployment.apps/db', 'other')).to.equal('other/db-1');
    expect(await where('Deployment/db', 'other')).to.equal('other/db-1');
  });

  it('resolvePod: a deployment without ready pods gives a running one', async () => {
    await runPod(server, { name: 'slow-1', namespace: 'other', deployment: 'slow', ready: false });
    expect((await access.resolvePod('deployment/slow.other', 'default')).metadata!.name).to.equal('slow-1');
  });

  it('resolvePod: errors are one clear line', async () => {
    const message = async (target: string, ns = 'default') => {
      const err = await failureOf(access.resolvePod(target, ns));
      expect(err).to.be.instanceOf(UserError);
      return err.message;
    };
    expect(await message('foo', 'bar')).to.equal('pod foo not found in namespace bar');
    expect(await message('pod/foo.bar')).to.equal('pod foo not found in namespace bar');
    expect(await message('deployment/nope')).to.equal('deployment nope not found in namespace default');
    expect(await message('deployment/idle')).to.equal('deployment idle.default has no running pods');
    expect(await message('svc/x')).to.equal('"svc/x": resource type "svc" cannot be used here; give a pod (<name>, pod/<name>) or a deployment (deployment/<name>)');
    expect(await message('pod/')).to.equal('"pod/": no pod name given');
    expect(await message('web.')).to.equal('"web.": empty namespace after "."');
    expect(await message('WEB')).to.match(/^"WEB" is not a valid pod name/);
    expect(await message('x'.repeat(5000))).to.match(/^"x{77}\.\.\." is not a valid pod name/);
  });

  it('parsePodTarget: the namespace is what follows the last dot', () => {
    expect(parsePodTarget('a.b.c')).to.deep.equal({ kind: 'pod', name: 'a.b', namespace: 'c' });
    expect(parsePodTarget('deploy/a')).to.deep.equal({ kind: 'deployment', name: 'a' });
  });

  it('podsBySelector: the running pods, by name', async () => {
    const names = (pods: k8s.V1Pod[]) => pods.map((p) => p.metadata!.name);
    expect(names(await access.podsBySelector('default', 'app=app'))).to.deep.equal(['app-1', 'app-2']);
    expect(names(await access.podsBySelector('default', 'app in (app,idle)'))).to.deep.equal(['app-1', 'app-2']);
    expect(names(await access.podsBySelector('other', 'app=app'))).to.deep.equal([]);
    const err = await failureOf(access.podsBySelector('default', 'app in ('));
    expect(err.message).to.match(/^cannot list pods in namespace default with selector "app in \(": 400/);
  });

  it('meshctlOrchOptions: the orchestrator options of the global flags, CLI pacing, the CLI\'s default config file', () => {
    expect(meshctlOrchOptions({ orchconfig: '/x', context: '' })).to.deep.equal({ orchconfig: '/x', context: undefined, qps: 50, burst: 100, defaultConfigFile: true });
    expect(meshctlOrchOptions({ orchconfig: '', context: 'c', as: 'jane', 'as-group': ['a', 'b'], 'as-uid': 'u' })).to.deep.equal({
      orchconfig: '',
      context: 'c',
      qps: 50,
      burst: 100,
      defaultConfigFile: true,
      impersonate: { user: 'jane', groups: ['a', 'b'], uid: 'u' },
    });
  });

  it('--as, --as-group (twice) and --as-uid reach the server on typed calls, raw GETs, watches and port-forwards', async () => {
    const as = meshctlOrchAccess({ orchconfig: kubeconfig, as: 'jane', 'as-group': ['devs', 'ops, oncall'], 'as-uid': 'u-42' });
    const expected = { user: 'jane', groups: ['devs', 'ops, oncall'], uid: 'u-42' };
    const from = server.requests.log.length;
    await as.resolvePod('web', 'default');
    await as.client.getJson('/api/v1/namespaces/default/pods');
    const events: string[] = [];
    const controller = await as.client.watch('/api/v1/namespaces/default/pods', {}, (type) => events.push(type), () => undefined);
    await until('the watch to open', () => events.length > 0);
    controller.abort();
    await runPod(server, { name: 'target' });
    await failureOf(as.forwarder.connect({ name: 'target', namespace: 'default' }, 1).then((s) => new Promise((_, reject) => s.on('error', reject))));
    const seen = server.requests.log.slice(from).filter((e) => e.path.startsWith('/api/v1/namespaces/default/pods'));
    expect(seen.map((e) => `${e.verb} ${e.resource}`)).to.deep.equal(['get pods', 'list pods', 'watch pods', 'create pods/portforward']);
    for (const e of seen) expect(e.impersonate, `${e.verb} ${e.resource}`).to.deep.equal(expected);
    await as.close();
    // Without the flags nothing is impersonated.
    const plain = server.requests.log.length;
    await access.resolvePod('web', 'default');
    expect(server.requests.log.slice(plain).every((e) => e.impersonate === undefined)).to.equal(true);
  });

  it('--as-group or --as-uid without --as is refused', () => {
    expect(() => meshctlOrchAccess({ orchconfig: kubeconfig, 'as-group': ['devs'] })).to.throw(OrchConfigError, 'impersonating groups or a UID needs a user to impersonate as well (--as)');
  });
});

import * as k8s from '@kubernetes/client-node';
import { expect } from 'chai';
import { OrchApiServer, startOrchApiServer } from '../orch-api';
import { runPod } from '../orch-mesh';
import { apiError, request } from './support';

/* pods/<name>/log of the in-process API server, through @kubernetes/client-node and raw requests. */

describe('orch API server: pods/log', function () {
  this.timeout(20_000);
  let server: OrchApiServer;
  let core: k8s.CoreV1Api;
  // Set when the tests run, not when mocha loads the file (minutes earlier in a full run).
  let t0: Date;
  let t1: Date;

  before(async () => {
    t0 = new Date(Date.now() - 600_000);
    t1 = new Date(Date.now() - 60_000);
    server = await startOrchApiServer({ simulateCluster: false });
    core = server.kubeConfig().makeApiClient(k8s.CoreV1Api);
    await runPod(server, { name: 'one', namespace: 'ns' });
    await runPod(server, { name: 'two', namespace: 'ns', containers: [{ name: 'app', image: 'a' }, { name: 'side', image: 'b' }] });
    server.podLogs.set('ns', 'one', 'app', [{ at: t0, text: 'first' }, { at: t1, text: 'second' }, 'third']);
    server.podLogs.set('ns', 'one', 'app', ['before the restart'], { previous: true });
    server.podLogs.set('ns', 'two', 'side', ['side line']);
  });
  after(() => server?.stop());

  it('answers the log of the only container, or of the one named', async () => {
    expect(await core.readNamespacedPodLog({ name: 'one', namespace: 'ns' })).to.equal('first\nsecond\nthird\n');
    expect(await core.readNamespacedPodLog({ name: 'two', namespace: 'ns', container: 'side' })).to.equal('side line\n');
    expect(await core.readNamespacedPodLog({ name: 'two', namespace: 'ns', container: 'app' }), 'nothing logged yet').to.equal('');
  });

  it('honours previous, tailLines, sinceSeconds, sinceTime, limitBytes and timestamps', async () => {
    expect(await core.readNamespacedPodLog({ name: 'one', namespace: 'ns', previous: true })).to.equal('before the restart\n');
    expect(await core.readNamespacedPodLog({ name: 'one', namespace: 'ns', tailLines: 2 })).to.equal('second\nthird\n');
    expect(await core.readNamespacedPodLog({ name: 'one', namespace: 'ns', sinceSeconds: 120 })).to.equal('second\nthird\n');
    expect((await request(server, 'GET', `/api/v1/namespaces/ns/pods/one/log?sinceTime=${encodeURIComponent(new Date(t1.getTime() + 1000).toISOString())}`)).text).to.equal('third\n');
    expect(await core.readNamespacedPodLog({ name: 'one', namespace: 'ns', limitBytes: 8 })).to.equal('first\nse');
    const stamped = await core.readNamespacedPodLog({ name: 'one', namespace: 'ns', timestamps: true, tailLines: 3 });
    expect(stamped.split('\n')[0]).to.equal(`${t0.toISOString()} first`);
  });

  it('refuses as the real server does', async () => {
    const many = await apiError(core.readNamespacedPodLog({ name: 'two', namespace: 'ns' }));
    expect(many.code).to.equal(400);
    expect(many.status.message).to.equal('a container name must be specified for pod two, choose one of: [app side]');
    expect((await apiError(core.readNamespacedPodLog({ name: 'one', namespace: 'ns', container: 'nope' }))).status.message).to.equal('container nope is not valid for pod one');
    expect((await apiError(core.readNamespacedPodLog({ name: 'two', namespace: 'ns', container: 'side', previous: true }))).status.message).to.equal('previous terminated container "side" in pod "two" not found');
    expect((await apiError(core.readNamespacedPodLog({ name: 'gone', namespace: 'ns' }))).code).to.equal(404);
    const both = await request(server, 'GET', '/api/v1/namespaces/ns/pods/one/log?sinceSeconds=5&sinceTime=2024-01-01T00:00:00Z');
    expect(both.status).to.equal(400);
  });
});

import { expect } from 'chai';
import type { V1Pod } from '@kubernetes/client-node';
import {
  parseRepairOptions,
  RepairAction,
  RepairController,
  RepairLogger,
  RepairSink,
  RepairTiming,
  RepairValues,
} from '../../../../src/modules/cni/repair';
import { OrchApiServer, RecordedRequest, waitUntil } from '../../../helpers/orch-api-server';
import { brokenPod, completed, crashLooping, pod, repairValues, running } from './pods';

const LABEL = 'cni.mesh.io/uninitialized';

class CountingSink implements RepairSink {
  readonly counts: Record<RepairAction, number> = { label: 0, delete: 0 };
  countRepaired(type: RepairAction): void {
    this.counts[type]++;
  }
}

class RecordingLog implements RepairLogger {
  readonly lines: string[] = [];
  debug(msg: string): void {
    this.lines.push(`debug ${msg}`);
  }
  info(msg: string): void {
    this.lines.push(`info ${msg}`);
  }
  warn(msg: string): void {
    this.lines.push(`warn ${msg}`);
  }
  error(msg: string): void {
    this.lines.push(`error ${msg}`);
  }
  matching(re: RegExp): string[] {
    return this.lines.filter((l) => re.test(l));
  }
}

const podPath = (name: string, namespace = 'default') => `/api/v1/namespaces/${namespace}/pods/${name}`;

describe('repair: the controller against an orchestrator API', () => {
  let server: OrchApiServer;
  let sink: CountingSink;
  let log: RecordingLog;
  let controllers: RepairController[];

  async function startServer(options: ConstructorParameters<typeof OrchApiServer>[0] = {}): Promise<void> {
    server = new OrchApiServer(options);
    await server.start();
  }

  async function startController(values: Partial<RepairValues> = {}, timing: Partial<RepairTiming> = {}): Promise<RepairController> {
    const options = parseRepairOptions(repairValues({ nodeName: 'node-1', labelPods: true, labelKey: LABEL, ...values }));
    const controller = new RepairController(options, server.kubeConfig(), sink, log, { restartDelayMs: 50, retryDelayMs: 20, ...timing });
    controllers.push(controller);
    await controller.start();
    if (options.enabled) await waitUntil('the controller watches pods', () => server.watchCount === 1);
    return controller;
  }

  const labelled = (name: string, namespace = 'default') => server.pod(namespace, name)?.metadata?.labels?.[LABEL] === 'true';
  const patches = (name: string, namespace = 'default') => server.requestsTo('PATCH', `${podPath(name, namespace)}/status`);
  const deletes = (name: string, namespace = 'default') => server.requestsTo('DELETE', podPath(name, namespace));
  const repairs = () => server.requests.filter((r) => r.method === 'PATCH' || r.method === 'DELETE');
  const lists = () => server.requestsTo('GET', '/api/v1/pods').filter((r) => r.query.watch !== 'true');
  const watches = () => server.requestsTo('GET', '/api/v1/pods').filter((r) => r.query.watch === 'true');

  /**
   * Events are handled in order: once a broken pod added last is repaired (and counted: the
   * count follows the API's answer), every earlier one has been judged.
   */
  async function barrier(mode: 'label' | 'delete' = 'label', shape: Parameters<typeof brokenPod>[1] = {}): Promise<void> {
    const name = `canary-${server.requests.length}`;
    const counted = sink.counts[mode];
    server.addPod(brokenPod(name, shape));
    if (mode === 'label') await waitUntil(`${name} is labelled`, () => labelled(name) && sink.counts.label > counted);
    else await waitUntil(`${name} is deleted`, () => deletes(name).length > 0 && sink.counts.delete > counted);
  }

  const counted = (type: RepairAction, n: number) => waitUntil(`${n} ${type} repairs are counted`, () => sink.counts[type] >= n);

  function stillBroken(p: V1Pod): void {
    const status = p.status!.initContainerStatuses![0];
    status.restartCount = (status.restartCount ?? 0) + 1;
  }

  beforeEach(async () => {
    sink = new CountingSink();
    log = new RecordingLog();
    controllers = [];
    await startServer();
  });

  afterEach(async () => {
    for (const c of controllers) await c.stop();
    await server.stop();
  });

  describe('labelling', () => {
    it('labels a broken pod found by the first listing exactly once, through pods/status with a merge patch', async () => {
      server.addPod(brokenPod('a'));
      await startController();
      await waitUntil('a is labelled', () => labelled('a'));
      await counted('label', 1);
      expect(patches('a')).to.have.length(1);
      const patch: RecordedRequest = patches('a')[0];
      expect(patch.contentType).to.equal('application/merge-patch+json');
      expect(patch.body).to.deep.equal({ metadata: { labels: { [LABEL]: 'true' } } });
      expect(sink.counts).to.deep.equal({ label: 1, delete: 0 });
      expect(log.matching(/labelling it cni\.mesh\.io\/uninitialized=true: default\/a$/)).to.have.length(1);
    });

    it('does not label it again on further updates, watch reconnects and a relist', async () => {
      server.addPod(brokenPod('a'));
      await startController();
      await waitUntil('a is labelled', () => labelled('a'));
      server.modifyPod('default', 'a', stillBroken);
      server.modifyPod('default', 'a', stillBroken);
      server.closeWatches();
      await waitUntil('the controller watches again', () => watches().length === 2 && server.watchCount === 1);
      // A change the watch does not see, then history gone: the next watch gets 410 and relists.
      server.addPod(pod('elsewhere', { node: 'node-2' }));
      server.compact();
      server.closeWatches();
      await waitUntil('the controller relists', () => lists().length === 2 && server.watchCount === 1);
      server.modifyPod('default', 'a', stillBroken);
      await barrier();
      expect(patches('a')).to.have.length(1);
      expect(sink.counts.label).to.equal(2); // a and the canary
    });

    it('repairs a pod that breaks after it was first seen', async () => {
      server.addPod(pod('late', { initContainers: [running()] }));
      await startController();
      await barrier();
      expect(patches('late')).to.have.length(0);
      server.modifyPod('default', 'late', (p) => (p.status!.initContainerStatuses = [crashLooping()]));
      await waitUntil('late is labelled', () => labelled('late'));
      expect(patches('late')).to.have.length(1);
    });

    it('leaves healthy pods, pods without the sidecar, pods on other nodes and other exit codes alone', async () => {
      server.addPod(pod('healthy', { initContainers: [completed()] }));
      server.addPod(pod('recovered', { initContainers: [completed(126)] }));
      server.addPod(pod('starting', { initContainers: [running()] }));
      server.addPod(brokenPod('no-sidecar', { sidecar: false }));
      server.addPod(brokenPod('other-node', { node: 'node-2' }));
      server.addPod(pod('other-code', { initContainers: [crashLooping(1)] }));
      await startController();
      server.modifyPod('default', 'healthy', (p) => (p.status!.phase = 'Running'));
      await barrier();
      expect(repairs()).to.have.length(1);
      expect(repairs()[0].path).to.match(/^\/api\/v1\/namespaces\/default\/pods\/canary-\d+\/status$/);
      expect(sink.counts).to.deep.equal({ label: 1, delete: 0 });
    });

    it('labels a pod again when the label is taken off', async () => {
      server.addPod(brokenPod('a'));
      await startController();
      await waitUntil('a is labelled', () => labelled('a'));
      server.modifyPod('default', 'a', (p) => delete p.metadata!.labels![LABEL]);
      await waitUntil('a is labelled again', () => labelled('a'));
      expect(patches('a')).to.have.length(2);
    });

    it('does not patch a pod that already has the label key, whatever its value', async () => {
      server.addPod(brokenPod('a', { labels: { [LABEL]: 'false' } }));
      await startController();
      await barrier();
      expect(patches('a')).to.have.length(0);
    });
  });

  describe('deleting', () => {
    it('deletes a broken pod exactly once, with the UID and version it judged as preconditions', async () => {
      await server.stop();
      await startServer({ gracefulDeletion: true });
      const a = server.addPod(brokenPod('a'));
      await startController({ deletePods: true, labelPods: false });
      await waitUntil('a is being deleted', () => server.pod('default', 'a')?.metadata?.deletionTimestamp !== undefined);
      expect(deletes('a')).to.have.length(1);
      expect(deletes('a')[0].body).to.deep.equal({ preconditions: { uid: a.metadata?.uid, resourceVersion: a.metadata?.resourceVersion } });
      // While it terminates, the kubelet keeps updating it: no second delete.
      server.modifyPod('default', 'a', stillBroken);
      server.modifyPod('default', 'a', stillBroken);
      await barrier('delete');
      server.deletePod('default', 'a');
      expect(deletes('a')).to.have.length(1);
      expect(patches('a')).to.have.length(0);
      expect(sink.counts).to.deep.equal({ label: 0, delete: 2 });
      expect(log.matching(/deleting it: default\/a$/)).to.have.length(1);
    });

    it('deletes a pod re-created under the same name again: it is another pod', async () => {
      server.addPod(brokenPod('a'));
      await startController({ deletePods: true, labelPods: false });
      await waitUntil('a is deleted', () => server.pod('default', 'a') === undefined);
      server.addPod(brokenPod('a'));
      await waitUntil('the new a is deleted', () => deletes('a').length === 2 && server.pod('default', 'a') === undefined);
      await counted('delete', 2);
      expect(sink.counts.delete).to.equal(2);
    });

    it('deletes rather than labels when both are enabled', async () => {
      server.addPod(brokenPod('a'));
      await startController({ deletePods: true, labelPods: true });
      await waitUntil('a is deleted', () => server.pod('default', 'a') === undefined);
      await barrier('delete');
      expect(patches('a')).to.have.length(0);
      expect(sink.counts).to.deep.equal({ label: 0, delete: 2 });
      expect(log.matching(/labelling is off while deleting is on/)).to.have.length(1);
    });

    it('when the pod changed before the delete (409), judges its new version', async () => {
      server.addPod(brokenPod('a'));
      server.failNext('DELETE', podPath('a'), 409);
      await startController({ deletePods: true, labelPods: false });
      await waitUntil('the first delete is refused', () => deletes('a').length === 1);
      await barrier('delete');
      expect(server.pod('default', 'a')).not.to.equal(undefined);
      expect(sink.counts.delete).to.equal(1); // the canary only
      server.modifyPod('default', 'a', stillBroken);
      await waitUntil('a is deleted', () => server.pod('default', 'a') === undefined);
      await counted('delete', 2);
      expect(deletes('a')).to.have.length(2);
      expect(sink.counts.delete).to.equal(2);
    });
  });

  describe('matching', () => {
    it('matches the termination message when one is configured', async () => {
      const message = 'no CNI config';
      server.addPod(pod('match', { initContainers: [crashLooping(126, `\n${message}\n`)] }));
      server.addPod(pod('other', { initContainers: [crashLooping(126, 'something else')] }));
      await startController({ initContainerTerminationMessage: message });
      await waitUntil('match is labelled', () => labelled('match'));
      await barrier('label', { initContainers: [crashLooping(126, message)] });
      expect(patches('other')).to.have.length(0);
    });

    it('sends the configured field and label selectors, and the node, with the list and the watch', async () => {
      server.addPod(brokenPod('web', { labels: { app: 'web' } }));
      server.addPod(brokenPod('db', { labels: { app: 'db' } }));
      await startController({ fieldSelectors: 'status.phase=Pending', labelSelectors: 'app in (web)' });
      await waitUntil('web is labelled', () => labelled('web'));
      const expected = { fieldSelector: 'status.phase=Pending,spec.nodeName=node-1', labelSelector: 'app in (web)' };
      expect(lists()[0].query).to.deep.equal(expected);
      expect(watches()[0].query).to.include({ ...expected, watch: 'true' });
      await barrier('label', { labels: { app: 'web' } });
      expect(patches('db')).to.have.length(0);
    });

    it('manages the pods of every node when no node is set', async () => {
      server.addPod(brokenPod('one', { node: 'node-1' }));
      server.addPod(brokenPod('two', { node: 'node-2', namespace: 'apps' }));
      await startController({ nodeName: '' });
      await waitUntil('both are labelled', () => labelled('one') && labelled('two', 'apps'));
      expect(lists()[0].query).to.deep.equal({});
    });

    it('only reports broken pods, once each, when neither labelling nor deleting is enabled', async () => {
      server.addPod(brokenPod('a'));
      await startController({ labelPods: false, deletePods: false });
      const reported = (name: string) => log.matching(new RegExp(`no repair action is enabled: default/${name}$`)).length;
      await waitUntil('a is reported', () => reported('a') === 1);
      server.modifyPod('default', 'a', stillBroken);
      server.addPod(brokenPod('b'));
      await waitUntil('b is reported', () => reported('b') === 1);
      expect(reported('a')).to.equal(1);
      expect(repairs()).to.deep.equal([]);
      expect(sink.counts).to.deep.equal({ label: 0, delete: 0 });
    });
  });

  describe('API failures', () => {
    it('retries a failed label and counts the repair once', async () => {
      server.addPod(brokenPod('a'));
      server.failNext('PATCH', `${podPath('a')}/status`, 500, 2);
      await startController();
      await waitUntil('a is labelled', () => labelled('a'));
      await counted('label', 1);
      expect(patches('a')).to.have.length(3);
      expect(sink.counts.label).to.equal(1);
      expect(log.matching(/^warn failed to label broken pod default\/a \(attempt \d, retrying in \d+ms\): HTTP 500: injected failure \(HTTP 500\)$/)).to.have.length(2);
    });

    it('gives up after the last attempt until the pod changes', async () => {
      server.addPod(brokenPod('a'));
      server.failNext('PATCH', `${podPath('a')}/status`, 503, 3);
      await startController({}, { maxAttempts: 3 });
      await waitUntil('the controller gives up', () => log.matching(/giving up until it changes/).length === 1);
      await barrier();
      expect(patches('a')).to.have.length(3);
      server.modifyPod('default', 'a', stillBroken);
      await waitUntil('a is labelled', () => labelled('a'));
      expect(patches('a')).to.have.length(4);
    });

    it('lists again when the first listing fails', async () => {
      server.addPod(brokenPod('a'));
      server.failNext('GET', '/api/v1/pods', 503);
      await startController();
      await waitUntil('a is labelled', () => labelled('a'));
      expect(lists()).to.have.length(2);
      expect(log.matching(/^warn listing or watching pods failed, retrying in 50ms: HTTP 503/)).to.have.length(1);
    });

    it('watches again when a watch is refused, and keeps repairing', async () => {
      await startController();
      server.failNext('GET', '/api/v1/pods', 500);
      server.closeWatches();
      await waitUntil('the controller watches again', () => watches().length === 3 && server.watchCount === 1);
      server.addPod(brokenPod('a'));
      await waitUntil('a is labelled', () => labelled('a'));
      expect(log.matching(/listing or watching pods failed/)).to.deep.equal(['warn listing or watching pods failed, retrying in 50ms: HTTP 500: Internal Server Error']);
    });

    it('keeps retrying while the API server is away, and catches up when it is back', async () => {
      await startController();
      const url = new URL(server.url);
      await server.stop();
      await waitUntil('failures are logged', () => log.matching(/listing or watching pods failed/).length >= 2);
      // Back on the same port, with a pod that broke meanwhile.
      server = await restartOn(Number(url.port));
      server.addPod(brokenPod('a'));
      await waitUntil('a is labelled', () => labelled('a'), 10_000);
    });
  });

  describe('lifecycle', () => {
    it('stops watching and repairing on stop()', async () => {
      const controller = await startController();
      await controller.stop();
      await waitUntil('the watch is closed', () => server.watchCount === 0);
      server.addPod(brokenPod('a'));
      await new Promise((r) => setTimeout(r, 200));
      expect(repairs()).to.deep.equal([]);
      expect(log.matching(/failed/)).to.deep.equal([]);
    });

    it('does nothing when disabled', async () => {
      server.addPod(brokenPod('a'));
      await startController({ enabled: false });
      await new Promise((r) => setTimeout(r, 100));
      expect(server.requests).to.deep.equal([]);
      expect(log.lines).to.deep.equal(['info CNI race repair is disabled']);
    });
  });
});

/** A new fake server on a given port (the old one's), so a client configured for it reconnects. */
async function restartOn(port: number): Promise<OrchApiServer> {
  const server = new OrchApiServer({ port });
  await server.start();
  return server;
}

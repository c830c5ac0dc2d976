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
import { type OrchApiServer, type RequestLogEntry, startOrchApiServer } from '../../../helpers/orch-api';
import { waitUntil } from '../../../helpers/orch-api-tests/support';
import { addPod, brokenPod, completed, crashLooping, getPod, modifyPod, pod, repairValues, running } from './pods';

const LABEL = 'cni.mesh.io/uninitialized';
/** A finalizer standing for the kubelet stopping a pod's containers. */
const TERMINATING = 'test.orch/terminating';

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

  /** No simulated kubelet or controllers: the pods change only as the tests and the controller change them. */
  async function startServer(): Promise<void> {
    server = await startOrchApiServer({ simulateCluster: false });
  }

  async function startController(values: Partial<RepairValues> = {}, timing: Partial<RepairTiming> = {}): Promise<RepairController> {
    const options = parseRepairOptions(repairValues({ nodeName: 'node-1', labelPods: true, labelKey: LABEL, ...values }));
    const controller = new RepairController(options, server.kubeConfig(), sink, log, { restartDelayMs: 50, retryDelayMs: 20, ...timing });
    controllers.push(controller);
    await controller.start();
    if (options.enabled) await waitUntil('the controller watches pods', () => server.watchCount === 1);
    return controller;
  }

  const requestsTo = (method: string, path: string) => server.requests.log.filter((r) => r.method === method && r.path === path);
  /** The next `count` requests of this method to this path are answered with a `status` error. */
  const failNext = (method: string, path: string, status: number, count = 1) =>
    server.faults.failRequests(status, { count, match: new RegExp(`^${method} ${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(\\?|$)`) });
  const labelled = (name: string, namespace = 'default') => getPod(server, namespace, name)?.metadata?.labels?.[LABEL] === 'true';
  const patches = (name: string, namespace = 'default') => requestsTo('PATCH', `${podPath(name, namespace)}/status`);
  const deletes = (name: string, namespace = 'default') => requestsTo('DELETE', podPath(name, namespace));
  const repairs = () => server.requests.log.filter((r) => r.method === 'PATCH' || r.method === 'DELETE');
  const lists = () => requestsTo('GET', '/api/v1/pods').filter((r) => r.query.watch !== 'true');
  const watches = () => requestsTo('GET', '/api/v1/pods').filter((r) => r.query.watch === 'true');

  /**
   * Events are handled in order: once a broken pod added last is repaired (and counted: the
   * count follows the API's answer), every earlier one has been judged.
   */
  async function barrier(mode: 'label' | 'delete' = 'label', shape: Parameters<typeof brokenPod>[1] = {}): Promise<void> {
    const name = `canary-${server.requests.log.length}`;
    const counted = sink.counts[mode];
    await addPod(server, brokenPod(name, shape));
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
      await addPod(server, brokenPod('a'));
      await startController();
      await waitUntil('a is labelled', () => labelled('a'));
      await counted('label', 1);
      expect(patches('a')).to.have.length(1);
      const patch: RequestLogEntry = patches('a')[0];
      expect(patch.contentType).to.equal('application/merge-patch+json');
      expect(patch.body).to.deep.equal({ metadata: { labels: { [LABEL]: 'true' } } });
      expect(sink.counts).to.deep.equal({ label: 1, delete: 0 });
      expect(log.matching(/labelling it cni\.mesh\.io\/uninitialized=true: default\/a$/)).to.have.length(1);
    });

    it('does not label it again on further updates, watch reconnects and a relist', async () => {
      await addPod(server, brokenPod('a'));
      await startController();
      await waitUntil('a is labelled', () => labelled('a'));
      await modifyPod(server, 'default', 'a', stillBroken);
      await modifyPod(server, 'default', 'a', stillBroken);
      server.faults.dropWatches();
      await waitUntil('the controller watches again', () => watches().length === 2 && server.watchCount === 1);
      // A change the watch does not see, then history gone: the next watch gets 410 and relists.
      await addPod(server, pod('elsewhere', { node: 'node-2' }));
      server.faults.compact();
      server.faults.dropWatches();
      await waitUntil('the controller relists', () => lists().length === 2 && server.watchCount === 1);
      await modifyPod(server, 'default', 'a', stillBroken);
      await barrier();
      expect(patches('a')).to.have.length(1);
      expect(sink.counts.label).to.equal(2); // a and the canary
    });

    it('repairs a pod that breaks after it was first seen', async () => {
      await addPod(server, pod('late', { initContainers: [running()] }));
      await startController();
      await barrier();
      expect(patches('late')).to.have.length(0);
      await modifyPod(server, 'default', 'late', (p) => (p.status!.initContainerStatuses = [crashLooping()]));
      await waitUntil('late is labelled', () => labelled('late'));
      expect(patches('late')).to.have.length(1);
    });

    it('leaves healthy pods, pods without the sidecar, pods on other nodes and other exit codes alone', async () => {
      await addPod(server, pod('healthy', { initContainers: [completed()] }));
      await addPod(server, pod('recovered', { initContainers: [completed(126)] }));
      await addPod(server, pod('starting', { initContainers: [running()] }));
      await addPod(server, brokenPod('no-sidecar', { sidecar: false }));
      await addPod(server, brokenPod('other-node', { node: 'node-2' }));
      await addPod(server, pod('other-code', { initContainers: [crashLooping(1)] }));
      await startController();
      await modifyPod(server, 'default', 'healthy', (p) => (p.status!.phase = 'Running'));
      await barrier();
      expect(repairs()).to.have.length(1);
      expect(repairs()[0].path).to.match(/^\/api\/v1\/namespaces\/default\/pods\/canary-\d+\/status$/);
      expect(sink.counts).to.deep.equal({ label: 1, delete: 0 });
    });

    it('labels a pod again when the label is taken off', async () => {
      await addPod(server, brokenPod('a'));
      await startController();
      await waitUntil('a is labelled', () => labelled('a'));
      await modifyPod(server, 'default', 'a', (p) => delete p.metadata!.labels![LABEL]);
      await waitUntil('a is labelled again', () => labelled('a'));
      expect(patches('a')).to.have.length(2);
    });

    it('does not patch a pod that already has the label key, whatever its value', async () => {
      await addPod(server, brokenPod('a', { labels: { [LABEL]: 'false' } }));
      await startController();
      await barrier();
      expect(patches('a')).to.have.length(0);
    });
  });

  describe('deleting', () => {
    it('deletes a broken pod exactly once, with the UID and version it judged as preconditions', async () => {
      // A finalizer holds it while it terminates, as the kubelet does until the containers stop.
      const broken = brokenPod('a');
      broken.metadata!.finalizers = [TERMINATING];
      const a = await addPod(server, broken);
      await startController({ deletePods: true, labelPods: false });
      await waitUntil('a is being deleted', () => getPod(server, 'default', 'a')?.metadata?.deletionTimestamp !== undefined);
      expect(deletes('a')).to.have.length(1);
      expect(deletes('a')[0].body).to.deep.equal({ preconditions: { uid: a.metadata?.uid, resourceVersion: a.metadata?.resourceVersion } });
      // While it terminates, the kubelet keeps updating it: no second delete.
      await modifyPod(server, 'default', 'a', stillBroken);
      await modifyPod(server, 'default', 'a', stillBroken);
      await barrier('delete');
      await modifyPod(server, 'default', 'a', (p) => (p.metadata!.finalizers = []));
      await waitUntil('a is gone', () => getPod(server, 'default', 'a') === undefined);
      expect(deletes('a')).to.have.length(1);
      expect(patches('a')).to.have.length(0);
      expect(sink.counts).to.deep.equal({ label: 0, delete: 2 });
      expect(log.matching(/deleting it: default\/a$/)).to.have.length(1);
    });

    it('deletes a pod re-created under the same name again: it is another pod', async () => {
      await addPod(server, brokenPod('a'));
      await startController({ deletePods: true, labelPods: false });
      await waitUntil('a is deleted', () => getPod(server, 'default', 'a') === undefined);
      await addPod(server, brokenPod('a'));
      await waitUntil('the new a is deleted', () => deletes('a').length === 2 && getPod(server, 'default', 'a') === undefined);
      await counted('delete', 2);
      expect(sink.counts.delete).to.equal(2);
    });

    it('deletes rather than labels when both are enabled', async () => {
      await addPod(server, brokenPod('a'));
      await startController({ deletePods: true, labelPods: true });
      await waitUntil('a is deleted', () => getPod(server, 'default', 'a') === undefined);
      await barrier('delete');
      expect(patches('a')).to.have.length(0);
      expect(sink.counts).to.deep.equal({ label: 0, delete: 2 });
      expect(log.matching(/labelling is off while deleting is on/)).to.have.length(1);
    });

    it('when the pod changed before the delete (409), judges its new version', async () => {
      await addPod(server, brokenPod('a'));
      failNext('DELETE', podPath('a'), 409);
      await startController({ deletePods: true, labelPods: false });
      await waitUntil('the first delete is refused', () => deletes('a').length === 1);
      await barrier('delete');
      expect(getPod(server, 'default', 'a')).not.to.equal(undefined);
      expect(sink.counts.delete).to.equal(1); // the canary only
      await modifyPod(server, 'default', 'a', stillBroken);
      await waitUntil('a is deleted', () => getPod(server, 'default', 'a') === undefined);
      await counted('delete', 2);
      expect(deletes('a')).to.have.length(2);
      expect(sink.counts.delete).to.equal(2);
    });
  });

  describe('matching', () => {
    it('matches the termination message when one is configured', async () => {
      const message = 'no CNI config';
      await addPod(server, pod('match', { initContainers: [crashLooping(126, `\n${message}\n`)] }));
      await addPod(server, pod('other', { initContainers: [crashLooping(126, 'something else')] }));
      await startController({ initContainerTerminationMessage: message });
      await waitUntil('match is labelled', () => labelled('match'));
      await barrier('label', { initContainers: [crashLooping(126, message)] });
      expect(patches('other')).to.have.length(0);
    });

    it('sends the configured field and label selectors, and the node, with the list and the watch', async () => {
      await addPod(server, brokenPod('web', { labels: { app: 'web' } }));
      await addPod(server, brokenPod('db', { labels: { app: 'db' } }));
      await startController({ fieldSelectors: 'status.phase=Pending', labelSelectors: 'app in (web)' });
      await waitUntil('web is labelled', () => labelled('web'));
      const expected = { fieldSelector: 'status.phase=Pending,spec.nodeName=node-1', labelSelector: 'app in (web)' };
      expect(lists()[0].query).to.deep.equal(expected);
      expect(watches()[0].query).to.include({ ...expected, watch: 'true' });
      await barrier('label', { labels: { app: 'web' } });
      expect(patches('db')).to.have.length(0);
    });

    it('manages the pods of every node when no node is set', async () => {
      await addPod(server, brokenPod('one', { node: 'node-1' }));
      await addPod(server, brokenPod('two', { node: 'node-2', namespace: 'apps' }));
      await startController({ nodeName: '' });
      await waitUntil('both are labelled', () => labelled('one') && labelled('two', 'apps'));
      expect(lists()[0].query).to.deep.equal({});
    });

    it('only reports broken pods, once each, when neither labelling nor deleting is enabled', async () => {
      await addPod(server, brokenPod('a'));
      await startController({ labelPods: false, deletePods: false });
      const reported = (name: string) => log.matching(new RegExp(`no repair action is enabled: default/${name}$`)).length;
      await waitUntil('a is reported', () => reported('a') === 1);
      await modifyPod(server, 'default', 'a', stillBroken);
      await addPod(server, brokenPod('b'));
      await waitUntil('b is reported', () => reported('b') === 1);
      expect(reported('a')).to.equal(1);
      expect(repairs()).to.deep.equal([]);
      expect(sink.counts).to.deep.equal({ label: 0, delete: 0 });
    });
  });

  describe('API failures', () => {
    it('retries a failed label and counts the repair once', async () => {
      await addPod(server, brokenPod('a'));
      failNext('PATCH', `${podPath('a')}/status`, 500, 2);
      await startController();
      await waitUntil('a is labelled', () => labelled('a'));
      await counted('label', 1);
      expect(patches('a')).to.have.length(3);
      expect(sink.counts.label).to.equal(1);
      expect(log.matching(/^warn failed to label broken pod default\/a \(attempt \d, retrying in \d+ms\): HTTP 500: injected failure \(HTTP 500\)$/)).to.have.length(2);
    });

    it('gives up after the last attempt until the pod changes', async () => {
      await addPod(server, brokenPod('a'));
      failNext('PATCH', `${podPath('a')}/status`, 503, 3);
      await startController({}, { maxAttempts: 3 });
      await waitUntil('the controller gives up', () => log.matching(/giving up until it changes/).length === 1);
      await barrier();
      expect(patches('a')).to.have.length(3);
      await modifyPod(server, 'default', 'a', stillBroken);
      await waitUntil('a is labelled', () => labelled('a'));
      expect(patches('a')).to.have.length(4);
    });

    it('lists again when the first listing fails', async () => {
      await addPod(server, brokenPod('a'));
      failNext('GET', '/api/v1/pods', 503);
      await startController();
      await waitUntil('a is labelled', () => labelled('a'));
      expect(lists()).to.have.length(2);
      expect(log.matching(/^warn listing or watching pods failed, retrying in 50ms: HTTP 503/)).to.have.length(1);
    });

    it('watches again when a watch is refused, and keeps repairing', async () => {
      await startController();
      failNext('GET', '/api/v1/pods', 500);
      server.faults.dropWatches();
      await waitUntil('the controller watches again', () => watches().length === 3 && server.watchCount === 1);
      await addPod(server, brokenPod('a'));
      await waitUntil('a is labelled', () => labelled('a'));
      expect(log.matching(/listing or watching pods failed/)).to.deep.equal(['warn listing or watching pods failed, retrying in 50ms: HTTP 500: Internal Server Error']);
    });

    it('keeps retrying while the API server is away, and catches up when it is back', async () => {
      await startController();
      await server.restart(async () => {
        await waitUntil('failures are logged', () => log.matching(/listing or watching pods failed/).length >= 2);
        // Back on the same port, with a pod that broke meanwhile.
        await addPod(server, brokenPod('a'));
      });
      await waitUntil('a is labelled', () => labelled('a'), 10_000);
    });
  });

  describe('lifecycle', () => {
    it('stops watching and repairing on stop()', async () => {
      const controller = await startController();
      await controller.stop();
      await waitUntil('the watch is closed', () => server.watchCount === 0);
      await addPod(server, brokenPod('a'));
      await new Promise((r) => setTimeout(r, 200));
      expect(repairs()).to.deep.equal([]);
      expect(log.matching(/failed/)).to.deep.equal([]);
    });

    it('does nothing when disabled', async () => {
      await addPod(server, brokenPod('a'));
      await startController({ enabled: false });
      await new Promise((r) => setTimeout(r, 100));
      expect(server.requests.log).to.deep.equal([]);
      expect(log.lines).to.deep.equal(['info CNI race repair is disabled']);
    });
  });
});

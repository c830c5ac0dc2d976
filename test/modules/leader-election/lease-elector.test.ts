import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CoordinationV1Api, V1MicroTime } from '@kubernetes/client-node';
import { expect } from 'chai';
import { LeaseElector, LeaseTimings } from '../../../src/modules/leader-election';
import { Logging } from '../../../src/modules/logging';
import { defaultLoggingOptions } from '../../../src/modules/logging/options';
import { OrchClient } from '../../../src/modules/orch';
import { OrchApiServer, startOrchApiServer } from '../../helpers/orch-api';

const NAMESPACE = 'mesh-system';
const TIMINGS: LeaseTimings = { leaseDurationMs: 2000, renewDeadlineMs: 1000, retryPeriodMs: 250 };

async function eventually(check: () => boolean, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function quietLogging(): Logging {
  const logging = new Logging('pilot-discovery');
  logging.configure({ ...defaultLoggingOptions('pilot-discovery'), defaultOutputLevel: 'none' });
  return logging;
}

/** One candidate: its elector and a record of what it was told. */
interface Candidate {
  identity: string;
  elector: LeaseElector;
  events: string[];
}

describe('leader election with a Lease', function () {
  this.timeout(30_000);
  let server: OrchApiServer;
  let client: OrchClient;
  let api: CoordinationV1Api;
  const candidates: Candidate[] = [];
  let lease = 0;

  before(async () => {
    server = await startOrchApiServer({ simulateCluster: false });
    await server.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } });
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lease-'));
    client = new OrchClient({ orchconfig: server.writeKubeconfigFile(dir), qps: 0, burst: 0 }, quietLogging());
    api = client.api(CoordinationV1Api);
  });

  afterEach(async () => {
    server.faults.clear();
    await Promise.all(candidates.splice(0).map((c) => c.elector.stop()));
  });

  after(async () => {
    client.stop();
    await server.stop();
  });

  function candidate(identity: string, name: string, timings = TIMINGS): Candidate {
    const events: string[] = [];
    const elector = new LeaseElector({
      api,
      namespace: NAMESPACE,
      name,
      identity,
      timings,
      log: quietLogging().scope('controllers'),
      onStartedLeading: () => void events.push('started'),
      onStoppedLeading: () => void events.push('stopped'),
    });
    const c = { identity, elector, events };
    candidates.push(c);
    return c;
  }

  const nextLease = () => `test-election-${++lease}`;
  const holder = (name: string) => server.get('coordination.k8s.io/v1', 'Lease', NAMESPACE, name)?.spec?.holderIdentity as string | undefined;

  it('exactly one of two candidates leads, and the Lease names it with MicroTime stamps', async () => {
    const name = nextLease();
    const a = candidate('replica-a', name);
    const b = candidate('replica-b', name);
    a.elector.start();
    b.elector.start();
    await eventually(() => a.elector.isLeader || b.elector.isLeader, 3000, 'a leader');
    // Several renewals later, still one.
    await new Promise((r) => setTimeout(r, 1200));
    expect([a, b].filter((c) => c.elector.isLeader)).to.have.length(1);
    const leader = a.elector.isLeader ? a : b;
    const follower = leader === a ? b : a;
    expect(leader.events).to.deep.equal(['started']);
    expect(follower.events).to.deep.equal([]);
    const stored = server.get('coordination.k8s.io/v1', 'Lease', NAMESPACE, name);
    expect(stored.spec.holderIdentity).to.equal(leader.identity);
    expect(stored.spec.leaseDurationSeconds).to.equal(2);
    expect(stored.spec.renewTime).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    expect(stored.spec.acquireTime).to.match(/\.\d{6}Z$/);
    // Renewals keep acquireTime and move renewTime.
    const before = stored.spec.renewTime as string;
    await new Promise((r) => setTimeout(r, 600));
    const later = server.get('coordination.k8s.io/v1', 'Lease', NAMESPACE, name);
    expect(later.spec.acquireTime).to.equal(stored.spec.acquireTime);
    expect(Date.parse(later.spec.renewTime)).to.be.greaterThan(Date.parse(before));
  });

  it('a leader stopping gracefully releases the Lease and the follower takes over at its next try', async () => {
    const name = nextLease();
    const a = candidate('replica-a', name);
    a.elector.start();
    await eventually(() => a.elector.isLeader, 3000, 'a to lead');
    const b = candidate('replica-b', name);
    b.elector.start();
    await new Promise((r) => setTimeout(r, 500));
    expect(b.elector.isLeader).to.equal(false);

    const stoppedAt = Date.now();
    await a.elector.stop();
    expect(a.events).to.deep.equal(['started', 'stopped']);
    await eventually(() => b.elector.isLeader, 3000, 'b to take over');
    // Well within the lease duration: released, not expired.
    expect(Date.now() - stoppedAt).to.be.lessThan(TIMINGS.leaseDurationMs);
    expect(holder(name)).to.equal('replica-b');
    const stored = server.get('coordination.k8s.io/v1', 'Lease', NAMESPACE, name);
    expect(stored.spec.leaseTransitions).to.equal(1);
  });

  it('takes over a Lease whose holder stopped renewing, once it has expired, and not before', async () => {
    const name = nextLease();
    // A holder that died: its last renewal is the last word.
    await api.createNamespacedLease({
      namespace: NAMESPACE,
      body: { metadata: { name, namespace: NAMESPACE }, spec: { holderIdentity: 'crashed-replica', leaseDurationSeconds: 2, renewTime: new V1MicroTime(), acquireTime: new V1MicroTime(), leaseTransitions: 3 } },
    });
    const b = candidate('replica-b', name);
    const startedAt = Date.now();
    b.elector.start();
    await new Promise((r) => setTimeout(r, 1200));
    expect(b.elector.isLeader, 'taken before the lease expired').to.equal(false);
    expect(holder(name)).to.equal('crashed-replica');
    await eventually(() => b.elector.isLeader, 4000, 'b to take the expired Lease');
    const took = Date.now() - startedAt;
    // The lease duration from when b first saw the record, plus at most one retry period (with jitter).
    expect(took).to.be.at.least(2000);
    expect(took).to.be.below(2000 + TIMINGS.retryPeriodMs * 1.2 + 500);
    const stored = server.get('coordination.k8s.io/v1', 'Lease', NAMESPACE, name);
    expect(stored.spec.holderIdentity).to.equal('replica-b');
    expect(stored.spec.leaseTransitions).to.equal(4);
  });

  it('a leader that cannot renew within the renew deadline stops leading, and leads again when the API is back', async () => {
    const name = nextLease();
    const a = candidate('replica-a', name);
    a.elector.start();
    await eventually(() => a.elector.isLeader, 3000, 'a to lead');
    const failedAt = Date.now();
    server.faults.failRequests(500, { match: new RegExp(`/leases/${name}`) });
    await eventually(() => !a.elector.isLeader, 3000, 'a to step down');
    // Not before the renew deadline, and before anyone else could take over (the lease duration).
    expect(Date.now() - failedAt).to.be.at.least(TIMINGS.renewDeadlineMs - TIMINGS.retryPeriodMs);
    expect(Date.now() - failedAt).to.be.below(TIMINGS.leaseDurationMs);
    expect(a.events).to.deep.equal(['started', 'stopped']);
    server.faults.clear();
    await eventually(() => a.elector.isLeader, 3000, 'a to lead again');
    expect(a.events).to.deep.equal(['started', 'stopped', 'started']);
  });

  it('a leader that finds another holder in the Lease steps down at once', async () => {
    const name = nextLease();
    const a = candidate('replica-a', name);
    a.elector.start();
    await eventually(() => a.elector.isLeader, 3000, 'a to lead');
    // Someone (an operator, a replica with a skewed view) writes itself in.
    const stored = server.get('coordination.k8s.io/v1', 'Lease', NAMESPACE, name);
    await server.update({ ...stored, spec: { ...stored.spec, holderIdentity: 'usurper', renewTime: new V1MicroTime().toISOString() } });
    await eventually(() => !a.elector.isLeader, 2000, 'a to step down');
    expect(a.events).to.deep.equal(['started', 'stopped']);
  });

  it('refuses timings the Lease cannot express or that would let two replicas lead', () => {
    const make = (timings: LeaseTimings) => () => new LeaseElector({ api, namespace: NAMESPACE, name: 'x', identity: 'i', timings, log: quietLogging().scope('controllers'), onStartedLeading: () => undefined, onStoppedLeading: () => undefined });
    expect(make({ leaseDurationMs: 500, renewDeadlineMs: 200, retryPeriodMs: 100 })).to.throw(/at least 1s/);
    expect(make({ leaseDurationMs: 2000, renewDeadlineMs: 2000, retryPeriodMs: 100 })).to.throw(/renew deadline must be shorter/);
    expect(make({ leaseDurationMs: 2000, renewDeadlineMs: 1000, retryPeriodMs: 1000 })).to.throw(/retry period/);
  });
});

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { expect } from 'chai';
import { LeaderElectionOptions, SingletonController, SingletonControllers } from '../../../src/modules/leader-election';
import { Logging } from '../../../src/modules/logging';
import { defaultLoggingOptions } from '../../../src/modules/logging/options';
import { OrchClient } from '../../../src/modules/orch';
import { OrderedContributionProvider } from '../../../src/modules/plugins';
import { OrchApiServer, startOrchApiServer } from '../../helpers/orch-api';

const NAMESPACE = 'mesh-system';

function quietLogging(): Logging {
  const logging = new Logging('pilot-discovery');
  logging.configure({ ...defaultLoggingOptions('pilot-discovery'), defaultOutputLevel: 'none' });
  return logging;
}

async function eventually(check: () => boolean, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A controller that records what it is told, in one shared journal. */
function controller(election: string, name: string, journal: string[]): SingletonController {
  return { election, name, start: () => void journal.push(`start ${name}`), stop: () => void journal.push(`stop ${name}`) };
}

describe('singleton controllers: one election per group', function () {
  this.timeout(30_000);
  let server: OrchApiServer;
  let kubeconfig: string;
  const clients: OrchClient[] = [];
  const runners: SingletonControllers[] = [];

  before(async () => {
    server = await startOrchApiServer({ simulateCluster: false });
    await server.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } });
    kubeconfig = server.writeKubeconfigFile(fs.mkdtempSync(path.join(os.tmpdir(), 'singletons-')));
  });

  afterEach(async () => {
    await Promise.all(runners.splice(0).map((r) => r.stop()));
    for (const c of clients.splice(0)) c.stop();
  });

  after(async () => {
    await server.stop();
  });

  function runner(identity: string, controllers: SingletonController[], enabled = true): SingletonControllers {
    const client = new OrchClient({ orchconfig: kubeconfig, qps: 0, burst: 0 }, quietLogging());
    clients.push(client);
    const options: LeaderElectionOptions = { enabled, namespace: NAMESPACE, identity, timings: { leaseDurationMs: 2000, renewDeadlineMs: 1000, retryPeriodMs: 250 } };
    const r = new SingletonControllers(new OrderedContributionProvider(() => controllers), options, client, quietLogging());
    runners.push(r);
    return r;
  }

  it('holds one Lease per group, starts each group\'s controllers on winning, and on stop ends them before releasing', async () => {
    const journal: string[] = [];
    const r = runner('replica-a', [controller('group-one', 'one-a', journal), controller('group-one', 'one-b', journal), controller('group-two', 'two', journal)]);
    await r.start();
    await eventually(() => r.isLeader('group-one') && r.isLeader('group-two'), 3000, 'both groups led');
    expect(journal.filter((j) => j.startsWith('start')).sort()).to.deep.equal(['start one-a', 'start one-b', 'start two']);
    const holder = (name: string) => server.get('coordination.k8s.io/v1', 'Lease', NAMESPACE, name)?.spec?.holderIdentity;
    expect(holder('group-one')).to.equal('replica-a');
    expect(holder('group-two')).to.equal('replica-a');
    await r.stop();
    // A group stops in reverse order of starting, and its Lease is released after.
    expect(journal.indexOf('stop one-b')).to.be.below(journal.indexOf('stop one-a'));
    expect(holder('group-one')).to.equal('');
    expect(holder('group-two')).to.equal('');
  });

  it('with leader election off, runs every controller at once and touches no Lease', async () => {
    const journal: string[] = [];
    const leaseRequests = () => server.requests.count({ resource: 'leases' });
    const before = leaseRequests();
    const r = runner('replica-solo', [controller('group-three', 'three', journal)], false);
    await r.start();
    expect(journal).to.deep.equal(['start three']);
    expect(r.isLeader('group-three')).to.equal(true);
    await r.stop();
    expect(journal).to.deep.equal(['start three', 'stop three']);
    expect(leaseRequests()).to.equal(before);
    expect(server.get('coordination.k8s.io/v1', 'Lease', NAMESPACE, 'group-three')).to.equal(undefined);
  });
});

/** Without the Gateway API CRDs, every waypoint command says what is missing in one line. */
import { expect } from 'chai';
import { OrchWorld, startOrchWorld } from '../../helpers/orch-mesh';
import { runCli } from '../../helpers/run-cli';

describe('meshctl waypoint on a cluster without the Gateway API', function () {
  this.timeout(60_000);
  let world: OrchWorld;
  before(async () => (world = await startOrchWorld({ namespaces: ['foo'], simulateCluster: false })));
  after(async () => world?.close());

  for (const args of [['apply'], ['list'], ['status'], ['delete', 'wp']]) {
    it(`waypoint ${args[0]} fails naming the missing Gateway kind`, async () => {
      const r = await runCli('meshctl', ['waypoint', ...args, '-n', 'foo', '--orchconfig', world.kubeconfig]);
      expect(r.code).to.equal(1);
      expect(r.stderr).to.equal('Error: cannot list Gateways: the cluster does not serve gateways.gateway.networking.k8s.io/v1 (install the Gateway API CRDs)\n');
    });
  }
});

/**
 * The simulator in-process, as meshctl's container builds it (the enabled plugins' generators
 * and proxy filters): a TCP port under network RBAC (a DENY closes the connection), a STRICT
 * port that refuses plain text and takes a mesh peer, and the answers' wording of both.
 */
import { expect } from 'chai';
import { createContainer } from '../../../src/container';
import { CommandScope } from '../../../src/modules/cli';
import { KindRegistry, KINDS, parseConfigText } from '../../../src/modules/config';
import { AuthzSimulator, FileWorkloads, overlay, SimRequest } from '../../../src/modules/authz-sim';
import { MeshConfig } from '../../../src/modules/mesh-config';
import { REPO_ROOT } from '../../helpers/run-cli';

const CONFIG = `apiVersion: networking.mesh.io/v1
kind: ServiceEntry
metadata: { name: db, namespace: data }
spec:
  hosts: [db.data.svc.cluster.local]
  location: MESH_INTERNAL
  resolution: STATIC
  ports:
  - { number: 5432, name: tcp, protocol: TCP, targetPort: 5432 }
  - { number: 8080, name: http, protocol: HTTP, targetPort: 8080 }
  workloadSelector: { labels: { app: db } }
---
apiVersion: networking.mesh.io/v1
kind: WorkloadEntry
metadata: { name: db-0, namespace: data }
spec: { address: 10.1.0.7, serviceAccount: db, labels: { app: db } }
---
apiVersion: security.mesh.io/v1
kind: PeerAuthentication
metadata: { name: db, namespace: data }
spec:
  selector: { matchLabels: { app: db } }
  mtls: { mode: PERMISSIVE }
  portLevelMtls: { "8080": { mode: STRICT } }
---
apiVersion: security.mesh.io/v1
kind: AuthorizationPolicy
metadata: { name: deny-batch, namespace: data }
spec:
  selector: { matchLabels: { app: db } }
  action: DENY
  rules: [{ from: [{ source: { ipBlocks: ["10.9.0.0/16"] } }] }]
`;

describe('authz-sim: the simulator in-process on TCP and STRICT ports', () => {
  const { container } = createContainer({ program: 'meshctl', env: {}, cwd: REPO_ROOT });
  const simulator = container.get<CommandScope>(CommandScope).resolve(AuthzSimulator, [[MeshConfig, new MeshConfig()]]);
  const parsed = parseConfigText('db.yaml', CONFIG, new KindRegistry(KINDS));
  const config = overlay(new Map(), parsed.resources.map((r) => r.resource));
  const base: SimRequest = { to: { name: 'db-0', namespace: 'data' }, method: 'GET', path: '/', headers: {} };

  it('closes a TCP connection a DENY rule matches, and passes the others on', async () => {
    expect(parsed.issues).to.deep.equal([]);
    const [denied, passed] = await simulator.run({ config, workloads: new FileWorkloads(config, 'data') }, [
      { ...base, port: 5432, sourceIp: '10.9.3.4' },
      { ...base, port: 5432, sourceIp: '10.8.3.4' },
    ], (i) => `request ${i}`);
    expect(denied.answer).to.deep.include({ decision: 'denied', by: 'envoy.filters.network.rbac', matched: { rule: 'deny-batch.data rule 0', action: 'DENY' } });
    expect(denied.answer.status).to.equal(undefined);
    expect(passed.answer).to.deep.include({ decision: 'allowed', reason: 'forwarded to the application (TCP): no ALLOW policy selects the workload, and no DENY rule matched' });
    expect(passed.answer.rules[0].rules[0].reason).to.equal('from: direct_remote_ip {address_prefix:"10.9.0.0",prefix_len:{value:16}} did not match 10.8.3.4');
  });

  it('refuses plain text on a STRICT port and takes a mesh peer there', async () => {
    const [plain, peer] = await simulator.run({ config, workloads: new FileWorkloads(config, 'data') }, [
      { ...base, port: 8080 },
      { ...base, port: 8080, principal: 'spiffe://cluster.local/ns/app/sa/api' },
    ], (i) => `request ${i}`);
    expect(plain.answer).to.deep.include({
      decision: 'refused',
      by: 'filter chain selection',
      reason: 'connection refused: the port takes mutual TLS only (PeerAuthentication STRICT): give --principal, --source-namespace or --from',
    });
    expect(peer.answer).to.deep.include({ decision: 'allowed', status: 200, chain: 'inbound|8080||-mtls' });
  });
});

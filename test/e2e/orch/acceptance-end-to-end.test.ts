/**
 * Issue 16 acceptance, as an operator would do it: the daemon runs against the orchestrator
 * API; a Deployment, its Service and a RequestAuthentication + AuthorizationPolicy are applied
 * with the real kubectl; the agent started for the pod (built-in proxy) gets its config from
 * the custom resources and enforces it on real requests (200/401/403); deleting the policy
 * opens the path within 2 s; a policy forced in past validation is refused by the daemon, which
 * keeps serving the last good config.
 */
import { expect } from 'chai';
import { RunningAgent, startAgent } from '../../helpers/agent';
import { RunningDaemon } from '../../helpers/daemon';
import { HttpApp, request, startHttpApp } from '../../helpers/http-apps';
import { JwksServer, SigningKey, signingKey, startJwksServer, token } from '../../helpers/jwt';
import { daemonMetric, kubectl, OrchWorld, startOrchDaemon, startOrchWorld, waitFor } from '../../helpers/orch-mesh';
import { usesSharedLoopbackNetwork } from '../../helpers/shared-network';

usesSharedLoopbackNetwork();

const ISS = 'https://issuer.example.com';
const POD_IP = '127.0.0.62';
const HOST = 'httpbin.foo.svc.cluster.local';

function workload(appPort: number): string {
  return `apiVersion: apps/v1
kind: Deployment
metadata: { name: httpbin, namespace: foo }
spec:
  replicas: 1
  selector: { matchLabels: { app: httpbin } }
  template:
    metadata:
      labels: { app: httpbin, version: v1 }
      annotations: { test.orch/pod-ip: "${POD_IP}" }
    spec:
      serviceAccountName: default
      containers: [{ name: httpbin, image: httpbin, ports: [{ containerPort: ${appPort}, name: http }] }]
---
apiVersion: v1
kind: Service
metadata: { name: httpbin, namespace: foo }
spec:
  selector: { app: httpbin }
  ports: [{ name: http, port: 8000, targetPort: ${appPort} }]
`;
}

function policies(jwksUri: string): string {
  return `apiVersion: security.mesh.io/v1
kind: RequestAuthentication
metadata: { name: httpbin-jwt, namespace: foo }
spec:
  selector: { matchLabels: { app: httpbin } }
  jwtRules: [{ issuer: "${ISS}", jwksUri: "${jwksUri}" }]
---
apiVersion: security.mesh.io/v1
kind: AuthorizationPolicy
metadata: { name: httpbin-allow, namespace: foo }
spec:
  selector: { matchLabels: { app: httpbin } }
  action: ALLOW
  rules: [{ from: [{ source: { requestPrincipals: ["${ISS}/alice"] } }] }]
`;
}

describe('issue 16 acceptance: the mesh on the orchestrator, enforced by the built-in proxy', function () {
  this.timeout(90_000);
  let world: OrchWorld;
  let daemon: RunningDaemon;
  let agent: RunningAgent;
  let app: HttpApp;
  let key: SigningKey;
  let jwks: JwksServer;

  const statusWith = async (jwt?: string) => (await request(POD_IP, 8000, '/headers', { host: HOST, ...(jwt ? { authorization: `Bearer ${jwt}` } : {}) })).status;

  before(async () => {
    app = await startHttpApp('httpbin');
    key = await signingKey('k1', 'ES256');
    jwks = await startJwksServer([key]);
    world = await startOrchWorld({ namespaces: ['foo'] });
    await world.apply(workload(app.port));
    daemon = await startOrchDaemon(world);
    agent = await startAgent({ grpcPort: daemon.grpcPort, instanceIp: POD_IP, namespace: 'foo', labels: { app: 'httpbin', version: 'v1' } });
    await agent.waitForLog(/built-in proxy ready/, 15_000);
  });
  after(async () => {
    await agent?.stop();
    await daemon?.stop();
    await world?.close();
    await jwks?.close();
    await app?.close();
  });

  it('serves the Deployment behind its Service with no policy: 200', async () => {
    const pods = JSON.parse((await kubectl(world.kubeconfig, ['get', 'pods', '-n', 'foo', '-o', 'json'])).stdout);
    expect(pods.items.map((p: { status: { podIP: string } }) => p.status.podIP)).to.deep.equal([POD_IP]);
    await waitFor(() => statusWith(), (s) => s === 200, 'the first request through the proxy', 10_000);
  });

  it('enforces the custom resources applied with kubectl: 401 for a bad token, 403 without the right principal, 200 for alice', async () => {
    await world.apply(policies(jwks.url));
    const alice = await token(key, { iss: ISS, sub: 'alice' });
    const bob = await token(key, { iss: ISS, sub: 'bob' });
    await waitFor(() => statusWith(), (s) => s === 403, 'the policy to be enforced', 10_000);
    expect(await statusWith(alice)).to.equal(200);
    expect(await statusWith(bob)).to.equal(403);
    expect(await statusWith(`${alice.slice(0, -4)}AAAA`)).to.equal(401);
    const expired = await token(key, { iss: ISS, sub: 'alice', expiresIn: -600 });
    expect(await statusWith(expired)).to.equal(401);
  });

  it('keeps the last good config when an invalid policy is forced in past validation, naming the object and field', async () => {
    const before = await daemonMetric(daemon, 'pilot_total_rejected_configs', { type: 'AuthorizationPolicy' });
    await world.server.update({
      ...world.server.get('security.mesh.io/v1', 'AuthorizationPolicy', 'foo', 'httpbin-allow'),
      spec: { selector: { matchLabels: { app: 'httpbin' } }, action: 'ALLOW', rules: [{ to: [{ operation: { methods: ['GET'], ports: ['not-a-port'] } }] }] },
    });
    await waitFor(() => daemonMetric(daemon, 'pilot_total_rejected_configs', { type: 'AuthorizationPolicy' }), (n) => n > before, 'the rejection');
    expect(daemon.output()).to.match(/AuthorizationPolicy foo\/httpbin-allow: spec\.rules\[0\]\.to\[0\]\.operation\.ports/);
    const alice = await token(key, { iss: ISS, sub: 'alice' });
    expect(await statusWith(alice)).to.equal(200);
    expect(await statusWith()).to.equal(403);
  });

  it('opens the path within 2 s of kubectl delete of the policy', async () => {
    const deleted = await kubectl(world.kubeconfig, ['delete', 'authorizationpolicy', 'httpbin-allow', '-n', 'foo']);
    expect(deleted.code, deleted.stderr).to.equal(0);
    const at = Date.now();
    await waitFor(() => statusWith(), (s) => s === 200, 'the path to open', 5000);
    expect(Date.now() - at).to.be.below(2000);
  });
});

/**
 * The orchestrator config source through a running daemon: RequestAuthentication and
 * AuthorizationPolicy custom resources applied with kubectl show up in the listeners a real
 * xDS client receives; an invalid one is rejected with the object and field named while its
 * last good version keeps serving; deleting one removes it; a --configDir file overlays the
 * orchestrator's resource of the same name.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { expect } from 'chai';
import { resourcesOf, sidecarNode, SotwClient } from '../../helpers/ads-client';
import { RunningDaemon } from '../../helpers/daemon';
import { httpGet } from '../../helpers/http';
import { daemonMetric, kubectl, OrchWorld, startOrchDaemon, startOrchWorld, waitFor } from '../../helpers/orch-mesh';

const LDS = 'type.googleapis.com/envoy.config.listener.v3.Listener';
const POD_IP = '10.8.0.3';
/** How the RBAC filter matches a request principal's subject (the issuer is matched apart). */
const subject = (sub: string) => `{"string_match":{"exact":"${sub}"}}`;
const JWKS = JSON.stringify({ keys: [{ kty: 'EC', crv: 'P-256', x: 'f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU', y: 'x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0', kid: 'k1' }] });

const WORKLOAD = `apiVersion: apps/v1
kind: Deployment
metadata: { name: cart, namespace: shop }
spec:
  replicas: 1
  selector: { matchLabels: { app: cart } }
  template:
    metadata:
      labels: { app: cart }
      annotations: { test.orch/pod-ip: "${POD_IP}" }
    spec:
      containers: [{ name: app, image: app, ports: [{ containerPort: 8080, name: http }] }]
---
apiVersion: v1
kind: Service
metadata: { name: cart, namespace: shop }
spec:
  selector: { app: cart }
  ports: [{ name: http, port: 80, targetPort: 8080 }]
`;

function requestAuthentication(jwksUri?: string): string {
  const rule = jwksUri ? `jwksUri: "${jwksUri}"` : `jwks: '${JWKS}'`;
  return `apiVersion: security.mesh.io/v1
kind: RequestAuthentication
metadata: { name: jwt, namespace: shop }
spec:
  selector: { matchLabels: { app: cart } }
  jwtRules: [{ issuer: "https://issuer.example.com", ${rule} }]
`;
}

function authorizationPolicy(name: string, principal: string): string {
  return `apiVersion: security.mesh.io/v1
kind: AuthorizationPolicy
metadata: { name: ${name}, namespace: shop }
spec:
  selector: { matchLabels: { app: cart } }
  action: ALLOW
  rules: [{ from: [{ source: { requestPrincipals: ["${principal}"] } }] }]
`;
}

describe('Orch config source through a running daemon (end to end)', function () {
  this.timeout(60_000);
  let world: OrchWorld;
  let daemon: RunningDaemon;
  let client: SotwClient;
  let configDir: string;
  /** The latest listeners the client received, as one JSON text to search. */
  let listeners = '';

  /** Reads LDS pushes (acking each) until `accept` holds for the listeners' JSON. */
  async function listenersUntil(accept: (json: string) => boolean, what: string, ms = 5000): Promise<string> {
    const deadline = Date.now() + ms;
    while (!accept(listeners)) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for listeners with ${what}`);
      const r = await client.next(LDS, left).catch(() => undefined);
      if (!r) continue;
      client.ack(r);
      listeners = JSON.stringify(resourcesOf(r));
    }
    return listeners;
  }

  async function configz(kind: string): Promise<Array<{ metadata: { name: string }; spec: Record<string, unknown> }>> {
    return JSON.parse((await httpGet(daemon.httpPort, `/debug/configz?kind=${kind}`)).body)[kind] ?? [];
  }

  before(async () => {
    world = await startOrchWorld({ namespaces: ['shop'] });
    await world.apply(WORKLOAD);
    await world.apply(requestAuthentication() + '---\n' + authorizationPolicy('allow-alice', 'https://issuer.example.com/alice'));
    configDir = fs.mkdtempSync(path.join(world.dir, 'config-'));
    daemon = await startOrchDaemon(world, ['--configDir', configDir]);
    client = new SotwClient(daemon.grpcPort, sidecarNode(POD_IP, 'shop', { LABELS: JSON.stringify({ app: 'cart' }) }));
    client.send({ type_url: LDS });
  });

  after(async () => {
    client?.close();
    await daemon?.stop();
    await world?.close();
  });

  it('serves the policies of custom resources listed at start: jwt_authn and RBAC on the workload inbound listener', async () => {
    const json = await listenersUntil((j) => j.includes(subject('alice')), 'the alice principal');
    expect(json).to.include('envoy.filters.http.jwt_authn');
    expect(json).to.include('envoy.filters.http.rbac');
    expect(await daemonMetric(daemon, 'pilot_k8s_cfg_events', { type: 'AuthorizationPolicy', event: 'add' })).to.equal(1);
    expect(await daemonMetric(daemon, 'pilot_k8s_cfg_events', { type: 'RequestAuthentication', event: 'add' })).to.equal(1);
  });

  it('follows an update of a policy (kubectl apply)', async () => {
    await world.apply(authorizationPolicy('allow-alice', 'https://issuer.example.com/bob'));
    const json = await listenersUntil((j) => j.includes(subject('bob')), 'the bob principal');
    expect(json).to.not.include(subject('alice'));
    expect(await daemonMetric(daemon, 'pilot_k8s_cfg_events', { type: 'AuthorizationPolicy', event: 'update' })).to.be.at.least(1);
  });

  it('rejects an invalid resource naming the object and field, counts it, and keeps serving its last good version', async () => {
    const rejectedBefore = await daemonMetric(daemon, 'pilot_total_rejected_configs', { type: 'RequestAuthentication' });
    // The schema lets it through (a string); only the daemon's checks know ftp is no key-set URL.
    await world.apply(requestAuthentication('ftp://issuer.example.com/jwks'));
    await daemon.waitForLog(/rejected config: RequestAuthentication shop\/jwt: spec\.jwtRules\[0\]\.jwksUri: scheme "ftp" is not supported; use http or https; keeping the last good version/);
    expect(await daemonMetric(daemon, 'pilot_total_rejected_configs', { type: 'RequestAuthentication' })).to.equal(rejectedBefore + 1);
    const served = await configz('RequestAuthentication');
    expect(served.map((r) => r.metadata.name)).to.deep.equal(['jwt']);
    expect(JSON.stringify(served[0].spec)).to.include('"jwks"').and.not.include('ftp://');
    expect(await client.nothingFor(500, LDS)).to.equal(undefined);

    // Fixed again: served at once.
    await world.apply(requestAuthentication());
    await daemon.waitForLog(/RequestAuthentication shop\/jwt is valid again/);
  });

  it('removes a deleted policy from the listeners within 2 s', async () => {
    const deleted = Date.now();
    const r = await kubectl(world.kubeconfig, ['delete', 'authorizationpolicy', 'allow-alice', '-n', 'shop']);
    expect(r.code, r.stderr).to.equal(0);
    expect(listeners).to.include(subject('bob'));
    await listenersUntil((j) => !j.includes(subject('bob')), 'the policy gone', 2000);
    expect(Date.now() - deleted).to.be.below(2000);
    expect(await daemonMetric(daemon, 'pilot_k8s_cfg_events', { type: 'AuthorizationPolicy', event: 'delete' })).to.equal(1);
  });

  it('lets a --configDir file overlay the orchestrator resource of the same name, and falls back when the file goes', async () => {
    await world.apply(authorizationPolicy('overlay', 'https://issuer.example.com/from-orch'));
    await waitFor(() => configz('AuthorizationPolicy'), (list) => JSON.stringify(list).includes('from-orch'), 'the orchestrator version');
    fs.writeFileSync(path.join(configDir, 'overlay.yaml'), authorizationPolicy('overlay', 'https://issuer.example.com/from-file'));
    const overlaid = await waitFor(() => configz('AuthorizationPolicy'), (list) => JSON.stringify(list).includes('from-file'), 'the file version');
    expect(JSON.stringify(overlaid)).to.not.include('from-orch');
    fs.rmSync(path.join(configDir, 'overlay.yaml'));
    await waitFor(() => configz('AuthorizationPolicy'), (list) => JSON.stringify(list).includes('from-orch'), 'the orchestrator version again');
  });
});

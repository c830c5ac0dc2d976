import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { failClosedJwks } from '../../../src/modules/security/authn';
import { resourcesOf, sidecarNode, SotwClient } from '../../helpers/ads-client';
import { RunningDaemon, startDaemon } from '../../helpers/daemon';
import { httpGet, metricValue } from '../../helpers/http';
import { workloadServiceYaml } from '../../helpers/push';
import { runCli } from '../../helpers/run-cli';
import { jwksOf, JwksServer, newSigningKey, SigningKey } from './authn-jwks-server';

const LDS = 'type.googleapis.com/envoy.config.listener.v3.Listener';
type Decoded = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** httpbin (10.0.0.10, app=httpbin) in foo on HTTP 8000, with a RequestAuthentication whose keys are at `jwksUri`. */
const config = (jwksUri: string) => `
${workloadServiceYaml({ namespace: 'foo', name: 'httpbin', address: '10.0.0.10', ports: ['{ number: 8000, name: http, protocol: HTTP, targetPort: 8080 }'], labels: { app: 'httpbin' } })}
---
apiVersion: security.mesh.io/v1
kind: RequestAuthentication
metadata: { name: jwt, namespace: foo }
spec:
  selector: { matchLabels: { app: httpbin } }
  jwtRules: [{ issuer: "https://issuer.test", jwksUri: "${jwksUri}" }]
`;

/** The key set inlined in the jwt_authn filter of httpbin's inbound listener, from an LDS response. */
function inlinedKeys(response: Decoded): string {
  const listener = resourcesOf(response).find((l) => l.name === '10.0.0.10_8000');
  expect(listener, 'inbound listener 10.0.0.10_8000').to.not.equal(undefined);
  const filters = listener!.filter_chains[0].filters[0].typed_config.http_filters as Decoded[];
  const jwt = filters.find((f) => f.name === 'envoy.filters.http.jwt_authn');
  expect(jwt, 'jwt_authn filter').to.not.equal(undefined);
  return jwt!.typed_config.providers['origins-0'].local_jwks.inline_string;
}

const kids = (jwks: string) => (JSON.parse(jwks).keys as Array<{ kid: string }>).map((k) => k.kid);

describe('pilot-discovery: key sets of RequestAuthentication', function () {
  this.timeout(30_000);
  let keyA: SigningKey;
  let keyB: SigningKey;
  let dir: string;
  let daemon: RunningDaemon | undefined;
  let server: JwksServer | undefined;
  let client: SotwClient | undefined;

  before(async () => {
    keyA = await newSigningKey('a');
    keyB = await newSigningKey('b');
  });
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-authn-'));
  });
  afterEach(async () => {
    client?.close();
    await daemon?.stop();
    await server?.stop();
    client = daemon = server = undefined;
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** httpbin's proxy, subscribed to LDS, with the first response ACKed. */
  async function connect(port: number): Promise<{ client: SotwClient; first: Decoded }> {
    const c = new SotwClient(port, sidecarNode('10.0.0.10', 'foo', { LABELS: JSON.stringify({ app: 'httpbin' }) }));
    c.send({ type_url: LDS });
    const first = await c.next(LDS);
    c.ack(first);
    return { client: c, first };
  }

  it('pushes a new LDS with the rotated keys when the key server changes them, and nothing while they stay the same', async () => {
    server = await JwksServer.start(jwksOf(keyA));
    fs.writeFileSync(path.join(dir, 'httpbin.yaml'), config(server.url()));
    daemon = await startDaemon(['--configDir', dir], { PILOT_JWT_PUB_KEY_REFRESH_INTERVAL: '200ms' });
    const connected = await connect(daemon.grpcPort);
    client = connected.client;
    // Fetched before xDS opened: the first answer already has the keys.
    expect(kids(inlinedKeys(connected.first))).to.deep.equal(['a']);

    // Refreshes of unchanged keys push nothing.
    const hits = server.hits;
    expect(await client.nothingFor(800, LDS)).to.equal(undefined);
    expect(server.hits).to.be.above(hits + 1);

    const since = daemon.output().length;
    server.body = jwksOf(keyA, keyB);
    const update = await client.next(LDS, 5000);
    expect(kids(inlinedKeys(update))).to.deep.equal(['a', 'b']);
    client.ack(update);
    await daemon.waitForLog(/fetched key sets changed; pushing RequestAuthentication\/foo\/jwt/, 1000, since);

    const metrics = await httpGet(daemon.monitoringPort, '/metrics');
    expect(metricValue(metrics, 'pilot_jwks_resolver_network_fetch_success_total')).to.be.at.least(3);
    expect(metricValue(metrics, 'pilot_jwks_resolver_network_fetch_fail_total')).to.equal(0);
  });

  it('serves the fail-closed key set while the key server is down, and the keys once it is up', async () => {
    server = await JwksServer.start(jwksOf(keyB));
    server.down = true;
    fs.writeFileSync(path.join(dir, 'httpbin.yaml'), config(server.url()));
    daemon = await startDaemon(['--configDir', dir], { PILOT_JWT_PUB_KEY_REFRESH_INTERVAL: '200ms' });
    const connected = await connect(daemon.grpcPort);
    client = connected.client;
    expect(inlinedKeys(connected.first)).to.equal(failClosedJwks());
    expect(daemon.output()).to.match(/cannot fetch the key set of http:\/\/127\.0\.0\.1:\d+\/jwks\.json: .*fail-closed/);
    const metrics = await httpGet(daemon.monitoringPort, '/metrics');
    expect(metricValue(metrics, 'pilot_jwks_resolver_network_fetch_fail_total')).to.be.at.least(1);

    server.down = false;
    const update = await client.next(LDS, 5000);
    expect(kids(inlinedKeys(update))).to.deep.equal(['b']);
  });

  it('fetches the key set of a policy added while running, and pushes it', async () => {
    server = await JwksServer.start(jwksOf(keyA));
    daemon = await startDaemon(['--configDir', dir]);
    const connected = await connect(daemon.grpcPort);
    client = connected.client;
    fs.writeFileSync(path.join(dir, 'httpbin.yaml'), config(server.url()));
    // The inbound listener appears with the policy; the last LDS carries the fetched keys.
    let keys: string | undefined;
    for (let i = 0; i < 3 && !(keys && kids(keys).includes('a')); i++) {
      const response = await client.next(LDS, 5000);
      client.ack(response);
      if (resourcesOf(response).some((l) => l.name === '10.0.0.10_8000')) keys = inlinedKeys(response);
    }
    expect(kids(keys!)).to.deep.equal(['a']);
  });

  it('refuses an unknown PILOT_JWT_ENABLE_REMOTE_JWKS with one line naming the setting and its values', async () => {
    const addrs = ['--grpcAddr', '127.0.0.1:0', '--httpAddr', '127.0.0.1:0', '--monitoringAddr', '127.0.0.1:0'];
    const bad = await runCli('pilot-discovery', ['discovery', ...addrs], { env: { PILOT_JWT_ENABLE_REMOTE_JWKS: 'envoy' } });
    expect(bad.code).to.equal(1);
    expect(bad.stderr).to.equal('Error: invalid value "envoy" for setting PILOT_JWT_ENABLE_REMOTE_JWKS: expected one of meshd, false, hybrid, true, proxy\n');
  });
});

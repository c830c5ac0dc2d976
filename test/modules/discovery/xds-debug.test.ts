import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { DeltaClient, sidecarNode, SotwClient } from '../../helpers/ads-client';
import { RunningDaemon, startDaemon } from '../../helpers/daemon';
import { httpGet } from '../../helpers/http';
import { JwksServer, SigningKey, signingKey, startJwksServer, token } from '../../helpers/jwt';
import { REPO_ROOT } from '../../helpers/run-cli';
import { loadMoreEnvoyProtos } from '../../../src/modules/envoy/protos';

/**
 * The daemon's debug types over xDS (the incumbent's `istio.io/debug`), against a real daemon
 * on its secure port with real tokens: every debug page as `mesh.io/debug` + `<name>?<query>`,
 * `mesh.io/debug/syncz` and `mesh.io/debug/config_dump` in the incumbent's forms, on state of
 * the world and delta streams; who may ask what; refusals as gRPC statuses, never a hang.
 */

const ISSUER = 'https://orch.test.local';
const CDS = 'type.googleapis.com/envoy.config.cluster.v3.Cluster';
const LDS = 'type.googleapis.com/envoy.config.listener.v3.Listener';
const CLIENT_CONFIG = 'type.googleapis.com/envoy.service.status.v3.ClientConfig';
const SERVER_NAME = 'meshd.mesh-system.svc';

type Decoded = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

describe('daemon: debug requests over xDS', function () {
  this.timeout(60_000);
  let key: SigningKey;
  let jwks: JwksServer;
  let daemon: RunningDaemon;
  const clients: Array<{ close(): void }> = [];

  const saToken = (ns: string, sa = 'default', aud = 'mesh-ca') => token(key, { iss: ISSUER, sub: `system:serviceaccount:${ns}:${sa}`, aud });
  const credentials = (d: RunningDaemon, bearer?: string): grpc.ChannelCredentials => {
    const ssl = grpc.credentials.createSsl(Buffer.from(d.rootCertPem()));
    if (!bearer) return ssl;
    return grpc.credentials.combineChannelCredentials(
      ssl,
      grpc.credentials.createFromMetadataGenerator((_params, callback) => {
        const m = new grpc.Metadata();
        m.set('authorization', `Bearer ${bearer}`);
        callback(null, m);
      }),
    );
  };
  const tls = { 'grpc.ssl_target_name_override': SERVER_NAME, 'grpc.default_authority': SERVER_NAME };
  /** A debug client on the secure port, presenting itself in `ns` (the token's namespace). */
  const debugClient = async (ns: string, bearer?: string, d = daemon) => {
    const c = new SotwClient(d.secureGrpcPort, sidecarNode('0.0.0.0', ns), credentials(d, bearer), tls);
    clients.push(c);
    return c;
  };
  /** A plain-text proxy subscribed to CDS and LDS, each acknowledged. */
  const proxy = async (ip: string, ns: string, d = daemon) => {
    const c = new SotwClient(d.grpcPort, sidecarNode(ip, ns, { MESH_VERSION: '9.9.9' }));
    clients.push(c);
    for (const t of [CDS, LDS]) {
      c.send({ type_url: t });
      c.ack(await c.next(t));
    }
    return c;
  };
  const jsonOf = (resource: Decoded): unknown => JSON.parse(Buffer.from(resource.value, 'base64').toString('utf8'));
  const failure = async (c: SotwClient | DeltaClient): Promise<grpc.ServiceError> => {
    try {
      const r = await c.next(undefined, 5000);
      throw new Error(`expected a refusal, got a response: ${JSON.stringify(r).slice(0, 300)}`);
    } catch (err) {
      return err as grpc.ServiceError;
    }
  };

  before(async () => {
    loadMoreEnvoyProtos(['envoy/service/status/v3/csds.proto']);
    key = await signingKey('orch-1');
    jwks = await startJwksServer([key]);
    daemon = await startDaemon(['--configDir', path.join(REPO_ROOT, 'samples', 'config')], {
      POD_NAME: 'meshd-a',
      JWT_RULE: JSON.stringify({ issuer: ISSUER, jwksUri: jwks.url }),
    });
    expect(daemon.secureGrpcPort).to.be.greaterThan(0);
  });

  after(async () => {
    for (const c of clients) c.close();
    await daemon?.stop();
    await jwks?.close();
  });

  it('answers mesh.io/debug/syncz with one ClientConfig per proxy, the replica and its build in control_plane', async () => {
    await proxy('10.40.0.1', 'foo');
    const c = await debugClient('mesh-system', await saToken('mesh-system'));
    c.send({ type_url: 'mesh.io/debug/syncz' });
    const r = await c.next('mesh.io/debug/syncz');
    const configs = (r.resources as Decoded[]).filter((x) => x['@type'] === CLIENT_CONFIG);
    // The debug client itself is no proxy.
    expect(configs.map((x) => x.node.id)).to.deep.equal(['sidecar~10.40.0.1~app.foo~foo.svc.cluster.local']);
    const status = Object.fromEntries((configs[0].generic_xds_configs as Decoded[]).map((g) => [g.type_url, g.config_status]));
    expect(status[CDS]).to.equal('SYNCED');
    expect(status[LDS]).to.equal('SYNCED');
    const identifier = JSON.parse(r.control_plane.identifier);
    const pkg = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8'));
    expect(identifier).to.deep.include({ Component: 'meshd', ID: 'meshd-a' });
    expect(identifier.Info.version).to.equal(pkg.version);
    // Answered once: an ACK of the answer asks nothing new.
    c.ack(r);
    expect(await c.nothingFor(300)).to.equal(undefined);
  });

  it('answers every debug page as mesh.io/debug + <name>?<query>, the page JSON as the value', async () => {
    const c = await debugClient('mesh-system', await saToken('mesh-system'));
    c.send({ type_url: 'mesh.io/debug', resource_names: ['configz?kind=ServiceEntry'] });
    const configz = await c.next('mesh.io/debug');
    expect(configz.resources).to.have.length(1);
    expect(configz.resources[0].type_url).to.equal('mesh.io/debug');
    const pages = jsonOf(configz.resources[0]) as Record<string, Array<{ metadata: { name: string } }>>;
    expect(Object.keys(pages)).to.deep.equal(['ServiceEntry']);
    expect(pages.ServiceEntry.map((e) => e.metadata.name)).to.include('ratings');
    // The same as the HTTP page, asked on the same stream.
    c.send({ type_url: 'mesh.io/debug', resource_names: ['syncz'], response_nonce: configz.nonce });
    const syncz = jsonOf((await c.next('mesh.io/debug')).resources[0]) as Array<{ proxy: string }>;
    const http = JSON.parse((await httpGet(daemon.httpPort, '/debug/syncz')).body) as Array<{ proxy: string }>;
    expect(syncz.map((s) => s.proxy)).to.deep.equal(http.map((s) => s.proxy));
    // mesh.io/debug/<name> with the query as the resource name.
    c.send({ type_url: 'mesh.io/debug/registryz' });
    const registry = jsonOf((await c.next('mesh.io/debug/registryz')).resources[0]) as Array<{ hostname: string }>;
    expect(registry.map((s) => s.hostname)).to.include('ratings.bar.svc.cluster.local');
    c.send({ type_url: 'mesh.io/debug', resource_names: ['version'] });
    const version = jsonOf((await c.next('mesh.io/debug')).resources[0]) as Record<string, unknown>;
    expect(version).to.deep.include({ Component: 'meshd', ID: 'meshd-a', Revision: 'default' });
  });

  it('gives config_dump of a proxy: what the daemon would send it, the same over xDS and HTTP', async () => {
    await proxy('10.40.0.2', 'bar');
    const c = await debugClient('mesh-system', await saToken('mesh-system'));
    c.send({ type_url: 'mesh.io/debug/config_dump', resource_names: ['app.bar'] });
    const r = await c.next('mesh.io/debug/config_dump');
    const types = (r.resources as Decoded[]).map((x) => x['@type']);
    expect(types).to.deep.equal([
      'type.googleapis.com/envoy.admin.v3.ClustersConfigDump',
      'type.googleapis.com/envoy.admin.v3.ListenersConfigDump',
      'type.googleapis.com/envoy.admin.v3.RoutesConfigDump',
      'type.googleapis.com/envoy.admin.v3.EndpointsConfigDump',
    ]);
    const clusters = (r.resources[0].dynamic_active_clusters as Decoded[]).map((e) => e.cluster.name);
    expect(clusters).to.include('outbound|9080||ratings.bar.svc.cluster.local');
    const http = JSON.parse((await httpGet(daemon.httpPort, '/debug/config_dump?proxyID=sidecar~10.40.0.2~app.bar~bar.svc.cluster.local')).body);
    expect(http.configs[0].dynamic_active_clusters.map((e: Decoded) => e.cluster.name)).to.deep.equal(clusters);
    c.send({ type_url: 'mesh.io/debug', resource_names: ['config_dump?proxyID=app.bar'], response_nonce: r.nonce });
    expect(jsonOf((await c.next('mesh.io/debug')).resources[0])).to.deep.equal(http);
  });

  it('answers on delta streams too: syncz named by proxy, debug pages by their resource name; an ACK asks nothing', async () => {
    const c = new DeltaClient(daemon.secureGrpcPort, sidecarNode('0.0.0.0', 'mesh-system'), credentials(daemon, await saToken('mesh-system')), tls);
    clients.push(c);
    c.send({ type_url: 'mesh.io/debug/syncz' });
    const r = await c.next('mesh.io/debug/syncz');
    const names = (r.resources as Decoded[]).map((x) => x.name);
    expect(names).to.include('sidecar~10.40.0.1~app.foo~foo.svc.cluster.local');
    expect((r.resources as Decoded[]).every((x) => x.resource['@type'] === CLIENT_CONFIG)).to.equal(true);
    c.ack(r);
    expect(await c.nothingFor(300)).to.equal(undefined);
    c.send({ type_url: 'mesh.io/debug', resource_names_subscribe: ['plugins'] });
    const plugins = await c.next('mesh.io/debug');
    expect(plugins.resources[0].name).to.equal('plugins');
    expect(JSON.parse(Buffer.from(plugins.resources[0].resource.value, 'base64').toString())).to.be.an('array');
  });

  it('refuses an unknown debug type naming it and the known ones, ending the stream', async () => {
    const c = await debugClient('mesh-system', await saToken('mesh-system'));
    c.send({ type_url: 'mesh.io/debug', resource_names: ['nosuchz'] });
    const err = await failure(c);
    expect(err.code).to.equal(grpc.status.INVALID_ARGUMENT);
    expect(err.details).to.contain('unknown debug type "nosuchz"').and.contain('clusterz, config_dump, config_files, configz, list, plugins, pprof, pprof/cmdline, pprof/heap, pprof/profile, registryz, syncz, version');
  });

  it('answers pages below /debug/ by their path (pprof/...), saying how to turn profiling on when it is off', async () => {
    const c = await debugClient('mesh-system', await saToken('mesh-system'));
    c.send({ type_url: 'mesh.io/debug', resource_names: ['pprof/heap'] });
    const err = await failure(c);
    expect(err.code).to.equal(grpc.status.NOT_FOUND);
    expect(err.details).to.contain('start the daemon with --profile');
    const bad = await debugClient('mesh-system', await saToken('mesh-system'));
    bad.send({ type_url: 'mesh.io/debug', resource_names: ['pprof/../configz'] });
    expect((await failure(bad)).details).to.contain('is not a debug type name');
  });

  it('says NOT_FOUND for the config dump of a proxy not connected here, and INVALID_ARGUMENT without a proxy', async () => {
    const c = await debugClient('mesh-system', await saToken('mesh-system'));
    c.send({ type_url: 'mesh.io/debug/config_dump', resource_names: ['nobody.nowhere'] });
    const err = await failure(c);
    expect(err.code).to.equal(grpc.status.NOT_FOUND);
    expect(err.details).to.contain('no proxy nobody.nowhere is connected to this daemon (meshd-a)');
    const d = await debugClient('mesh-system', await saToken('mesh-system'));
    d.send({ type_url: 'mesh.io/debug', resource_names: ['config_dump'] });
    expect((await failure(d)).code).to.equal(grpc.status.INVALID_ARGUMENT);
  });

  it('refuses callers without a mesh token: no token, a token of another audience, or the plain-text port', async () => {
    const none = await debugClient('mesh-system');
    none.send({ type_url: 'mesh.io/debug/syncz' });
    const e1 = await failure(none);
    expect(e1.code).to.equal(grpc.status.UNAUTHENTICATED);

    const wrongAudience = await debugClient('mesh-system', await saToken('mesh-system', 'default', 'https://kubernetes.default.svc.cluster.local'));
    wrongAudience.send({ type_url: 'mesh.io/debug/syncz' });
    const e2 = await failure(wrongAudience);
    expect(e2.code).to.equal(grpc.status.UNAUTHENTICATED);
    expect(e2.details).to.contain('audience');

    const plain = new SotwClient(daemon.grpcPort, sidecarNode('0.0.0.0', 'mesh-system'));
    clients.push(plain);
    plain.send({ type_url: 'mesh.io/debug/syncz' });
    const e3 = await failure(plain);
    expect(e3.code).to.equal(grpc.status.UNAUTHENTICATED);
    expect(e3.details).to.contain('ENABLE_DEBUG_ENDPOINT_AUTH');
  });

  it('lets identities of other namespaces ask only config_dump of their own proxies', async () => {
    await proxy('10.40.0.3', 'foo');
    const fooToken = await saToken('foo');
    const syncz = await debugClient('foo', fooToken);
    syncz.send({ type_url: 'mesh.io/debug/syncz' });
    const e1 = await failure(syncz);
    expect(e1.code).to.equal(grpc.status.PERMISSION_DENIED);
    expect(e1.details).to.contain('spiffe://cluster.local/ns/foo/sa/default may not ask for syncz');

    const own = await debugClient('foo', fooToken);
    own.send({ type_url: 'mesh.io/debug/config_dump', resource_names: ['sidecar~10.40.0.3~app.foo~foo.svc.cluster.local'] });
    expect((await own.next('mesh.io/debug/config_dump')).resources).to.have.length(4);

    const other = await debugClient('foo', fooToken);
    other.send({ type_url: 'mesh.io/debug', resource_names: ['config_dump?proxyID=app.bar'] });
    const e2 = await failure(other);
    expect(e2.code).to.equal(grpc.status.PERMISSION_DENIED);
    expect(e2.details).to.contain('in namespace bar');
  });

  it('opens every debug type to the namespaces of DEBUG_ENDPOINT_AUTH_ALLOWED_NAMESPACES', async () => {
    const other = await startDaemon(['--configDir', fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-dbg-'))], {
      JWT_RULE: JSON.stringify({ issuer: ISSUER, jwksUri: jwks.url }),
      DEBUG_ENDPOINT_AUTH_ALLOWED_NAMESPACES: 'ops, audit',
    });
    try {
      const ops = await debugClient('ops', await saToken('ops'), other);
      ops.send({ type_url: 'mesh.io/debug', resource_names: ['configz'] });
      expect((await ops.next('mesh.io/debug')).resources).to.have.length(1);
      const dev = await debugClient('dev', await saToken('dev'), other);
      dev.send({ type_url: 'mesh.io/debug', resource_names: ['configz'] });
      expect((await failure(dev)).code).to.equal(grpc.status.PERMISSION_DENIED);
    } finally {
      await other.stop();
    }
  });
});

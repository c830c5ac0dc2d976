/**
 * The data plane's xDS client against a real gRPC server that ends streams in every way it
 * can: it reconnects each time, resumes with what it holds (state of the world: version and
 * names; delta: initial resource versions), keeps the last good config on a NACK, waits for a
 * server that is not there yet, and stops cleanly.
 */
import { expect } from 'chai';
import * as grpc from '@grpc/grpc-js';
import { Backoff } from '../../../src/modules/shared/backoff';
import { ResourceMap, XdsClient, XdsProtocol } from '../../../src/modules/proxy/xds/xds-client';
import { TypeUrl } from '../../../src/modules/envoy/type-urls';
import { ScriptedAds, Stream } from '../../helpers/scripted-ads';
import { freePort } from '../security/mtls/grpc-workloads';

const FAST = { initialMs: 20, maxMs: 100 };
const cluster = (name: string) => ({ '@type': TypeUrl.Cluster, name, type: 'EDS' });

function clientFor(port: number, protocol: XdsProtocol, applied: ResourceMap[], logs: string[], reject?: (r: ResourceMap) => string | undefined): XdsClient {
  return new XdsClient(
    { address: `127.0.0.1:${port}`, node: { id: 'sidecar~127.0.0.1~a.foo~foo.svc.cluster.local', cluster: 'a', metadata: {} }, protocol, wildcardTypes: [TypeUrl.Cluster], backoff: FAST },
    {
      log: (level, message) => logs.push(`${level} ${message}`),
      apply: (_type, resources) => {
        const why = reject?.(resources);
        if (why) throw new Error(why);
        applied.push(resources);
      },
    },
  );
}

describe('the data plane xDS client: reconnects however a stream ends', () => {
  let ads: ScriptedAds;
  let client: XdsClient | undefined;
  afterEach(() => {
    client?.stop();
    ads?.stop();
  });

  const endings: Record<string, (call: Stream) => void> = {
    'an error status': (call) => call.emit('error', { code: grpc.status.INTERNAL, details: 'boom' }),
    'an OK status (the server ends the stream)': (call) => call.end(),
    'a status the server names UNAVAILABLE': (call) => call.emit('error', { code: grpc.status.UNAVAILABLE, details: 'going away' }),
  };
  for (const [how, end] of Object.entries(endings)) {
    it(`state of the world: after ${how}, a new stream resumes with the version and nonce-less request`, async () => {
      ads = new ScriptedAds('sotw');
      const port = await ads.start();
      ads.onRequest = (stream, r, i) => {
        if (ads.streams.length === 1 && i === 0) stream.call.write({ type_url: TypeUrl.Cluster, version_info: 'v1', nonce: 'n1', resources: [cluster('c1')] });
        if (ads.streams.length === 1 && i === 1) end(stream.call);
      };
      const applied: ResourceMap[] = [];
      const logs: string[] = [];
      client = clientFor(port, 'sotw', applied, logs);
      client.start();
      await ads.until(() => ads.streams.length >= 2 && ads.streams[1].requests.length >= 1);
      const [first, ack] = ads.streams[0].requests;
      expect(first.node.id).to.match(/^sidecar~/);
      expect(ack).to.include({ version_info: 'v1', response_nonce: 'n1' });
      const resumed = ads.streams[1].requests[0];
      expect(resumed.node.id, 'the node is sent again on a new stream').to.match(/^sidecar~/);
      expect(resumed).to.include({ type_url: TypeUrl.Cluster, version_info: 'v1', response_nonce: '' });
      expect([...applied[0].keys()]).to.deep.equal(['c1']);
      expect(logs.join('\n')).to.match(/xDS stream to 127\.0\.0\.1:\d+ ended \(.+\); serving the last good config meanwhile; reconnecting in \d+ ms/);
    });
  }

  it('state of the world: resumes the named subscriptions too, after the wildcards', async () => {
    ads = new ScriptedAds('sotw');
    const port = await ads.start();
    ads.onRequest = (stream, _r, i) => {
      if (ads.streams.length === 1 && i === 1) stream.call.emit('error', { code: grpc.status.INTERNAL, details: 'x' });
    };
    client = clientFor(port, 'sotw', [], []);
    client.start();
    client.subscribe(TypeUrl.ClusterLoadAssignment, ['b', 'a']);
    await ads.until(() => ads.streams.length >= 2 && ads.streams[1].requests.length >= 2);
    expect(ads.streams[1].requests.map((r) => [r.type_url, r.resource_names ?? []])).to.deep.equal([
      [TypeUrl.Cluster, []],
      [TypeUrl.ClusterLoadAssignment, ['a', 'b']],
    ]);
  });

  it('delta: a new stream carries initial_resource_versions of everything held', async () => {
    ads = new ScriptedAds('delta');
    const port = await ads.start();
    ads.onRequest = (stream, _r, i) => {
      if (ads.streams.length !== 1) return;
      if (i === 0) {
        const resource = (name: string, version: string) => ({ name, version, resource: cluster(name) });
        stream.call.write({ type_url: TypeUrl.Cluster, nonce: 'd1', resources: [resource('c1', 'h1'), resource('c2', 'h2')] });
      }
      if (i === 1) stream.call.write({ type_url: TypeUrl.Cluster, nonce: 'd2', resources: [], removed_resources: ['c2'] });
      if (i === 2) stream.call.emit('error', { code: grpc.status.UNAVAILABLE, details: 'restart' });
    };
    const applied: ResourceMap[] = [];
    client = clientFor(port, 'delta', applied, []);
    client.start();
    await ads.until(() => ads.streams.length >= 2 && ads.streams[1].requests.length >= 1);
    expect(ads.streams[0].requests[0].resource_names_subscribe).to.deep.equal(['*']);
    expect(ads.streams[0].requests[1]).to.include({ response_nonce: 'd1' });
    expect(applied.map((m) => [...m.keys()])).to.deep.equal([['c1', 'c2'], ['c1']]);
    expect(ads.streams[1].requests[0].initial_resource_versions).to.deep.equal({ c1: 'h1' });
  });

  it('NACKs what it cannot apply with the reason, and keeps the version it had', async () => {
    ads = new ScriptedAds('sotw');
    const port = await ads.start();
    ads.onRequest = (stream, _r, i) => {
      if (i === 0) stream.call.write({ type_url: TypeUrl.Cluster, version_info: 'v1', nonce: 'n1', resources: [cluster('good')] });
      if (i === 1) stream.call.write({ type_url: TypeUrl.Cluster, version_info: 'v2', nonce: 'n2', resources: [cluster('bad')] });
    };
    const applied: ResourceMap[] = [];
    client = clientFor(port, 'sotw', applied, [], (r) => (r.has('bad') ? 'cluster bad is not acceptable' : undefined));
    client.start();
    await ads.until(() => ads.streams[0]?.requests.length >= 3);
    const nack = ads.streams[0].requests[2];
    expect(nack).to.include({ version_info: 'v1', response_nonce: 'n2' });
    expect(nack.error_detail.message).to.equal('cluster bad is not acceptable');
    expect(applied).to.have.length(1);
  });

  it('waits for a server that is not there yet, and connects soon after it comes', async () => {
    const port = await freePort('127.0.0.1');
    const logs: string[] = [];
    client = new XdsClient(
      { address: `127.0.0.1:${port}`, node: { id: 'n', cluster: 'c', metadata: {} }, wildcardTypes: [TypeUrl.Cluster], backoff: { initialMs: 50, maxMs: 200 } },
      { log: (l, m) => logs.push(`${l} ${m}`), apply: () => undefined },
    );
    client.start();
    await new Promise((r) => setTimeout(r, 800));
    expect(client.connected).to.equal(false);
    expect(client.disconnectedForMs()).to.be.at.least(700);
    // One warning for the outage, not one per attempt.
    expect(logs.filter((l) => l.startsWith('warn'))).to.have.length(1);
    expect(logs[0]).to.match(/^warn xDS stream to 127\.0\.0\.1:\d+ unavailable for \d+\.\d s \(UNAVAILABLE: .*\); no config received yet; retrying in \d+ ms$/);
    ads = new ScriptedAds('sotw');
    await ads.start(port);
    ads.onRequest = (stream, _r, i) => {
      if (i === 0) stream.call.write({ type_url: TypeUrl.Cluster, version_info: 'v1', nonce: 'n1', resources: [] });
    };
    const started = Date.now();
    await ads.until(() => client!.connected, 2000);
    expect(Date.now() - started, 'the next attempt is at most the capped delay away').to.be.below(600);
    expect(client.disconnectedForMs()).to.equal(0);
  });

  it('stops: no attempt after stop(), even with a retry pending', async () => {
    ads = new ScriptedAds('sotw');
    const port = await ads.start();
    ads.onRequest = (stream) => stream.call.emit('error', { code: grpc.status.INTERNAL, details: 'again' });
    client = clientFor(port, 'sotw', [], []);
    client.start();
    await ads.until(() => ads.streams.length >= 3);
    client.stop();
    const seen = ads.streams.length;
    await new Promise((r) => setTimeout(r, 300));
    expect(ads.streams.length).to.be.at.most(seen + 1);
  });
});

describe('the reconnect backoff', () => {
  it('doubles from the first delay up to the cap, within the jitter, and starts over after reset', () => {
    const mid = new Backoff({ initialMs: 500, maxMs: 2000, random: () => 0.5 });
    expect([mid.next(), mid.next(), mid.next(), mid.next(), mid.next()]).to.deep.equal([500, 1000, 2000, 2000, 2000]);
    mid.reset();
    expect(mid.next()).to.equal(500);
    const low = new Backoff({ initialMs: 500, maxMs: 2000, jitter: 0.2, random: () => 0 });
    const high = new Backoff({ initialMs: 500, maxMs: 2000, jitter: 0.2, random: () => 0.999999 });
    expect(low.next()).to.equal(400);
    expect(high.next()).to.equal(600);
  });

  it('refuses a schedule that cannot work', () => {
    expect(() => new Backoff({ initialMs: 0, maxMs: 10 })).to.throw(RangeError);
    expect(() => new Backoff({ initialMs: 100, maxMs: 10 })).to.throw(/initialMs <= maxMs/);
  });
});

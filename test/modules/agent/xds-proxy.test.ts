/**
 * The agent's xDS proxy across daemon outages, with a scripted daemon: a stream the daemon
 * never answered is replayed once it is up, an answered one is held open (the proxy keeps its
 * config) and ended only when the daemon is reachable again, refusals pass through at once,
 * and stopping ends held streams.
 */
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { XdsProxy } from '../../../src/modules/agent/xds-proxy';
import { ResourceMap, XdsClient } from '../../../src/modules/proxy/xds/xds-client';
import { TypeUrl } from '../../../src/modules/envoy/type-urls';
import { ScriptedAds } from '../../helpers/scripted-ads';
import { freePort } from '../security/mtls/grpc-workloads';

const cluster = (name: string) => ({ '@type': TypeUrl.Cluster, name, type: 'EDS' });

describe("the agent's xDS proxy across daemon outages", function () {
  this.timeout(20_000);
  let dir: string;
  let port: number;
  let proxy: XdsProxy;
  let client: XdsClient;
  let daemon: ScriptedAds | undefined;
  const logs: string[] = [];
  const applied: ResourceMap[] = [];
  const events: string[] = [];

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-xds-proxy-'));
    port = await freePort('127.0.0.1');
    logs.length = 0;
    applied.length = 0;
    events.length = 0;
    proxy = new XdsProxy({
      socketPath: path.join(dir, 'XDS'),
      upstreamAddress: `127.0.0.1:${port}`,
      upstreamCredentials: () => grpc.credentials.createInsecure(),
      events: { connected: (ms) => events.push(`connected ${ms > 0 ? 'after outage' : 'first'}`), disconnected: () => events.push('disconnected') },
      log: (level, message) => logs.push(`${level} ${message}`),
    });
    await proxy.start();
    client = new XdsClient(
      { address: `unix:${path.join(dir, 'XDS')}`, node: { id: 'sidecar~1.1.1.1~a.foo~foo.svc.cluster.local', cluster: 'a', metadata: {} }, wildcardTypes: [TypeUrl.Cluster] },
      { log: () => undefined, apply: (_t, r) => void applied.push(r) },
    );
  });
  afterEach(async () => {
    client.stop();
    await proxy.stop();
    daemon?.stop();
    daemon = undefined;
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const answerClusters = (d: ScriptedAds, names: string[]) => {
    d.onRequest = (stream, r) => {
      if (r.response_nonce === '') stream.call.write({ type_url: TypeUrl.Cluster, version_info: names.join(','), nonce: `n${d.streams.length}`, resources: names.map(cluster) });
    };
  };

  /** The proxy gets clusters `c1` from the daemon, which then goes away. */
  const connectThenLoseTheDaemon = async () => {
    daemon = new ScriptedAds('sotw');
    answerClusters(daemon, ['c1']);
    await daemon.start(port);
    client.start();
    await daemon.until(() => applied.length === 1);
    daemon.stop();
    await daemon.until(() => !proxy.connected());
  };

  it('replays a stream the daemon never answered once the daemon is up: the proxy sees one slow stream', async () => {
    client.start();
    await new Promise((r) => setTimeout(r, 600));
    expect(client.connected).to.equal(false);
    expect(proxy.connected()).to.equal(false);
    daemon = new ScriptedAds('sotw');
    answerClusters(daemon, ['c1']);
    await daemon.start(port);
    await daemon.until(() => applied.length === 1, 5000);
    expect(daemon.streams[0].requests[0].node.id, 'the replay starts with the node').to.match(/^sidecar~/);
    expect(proxy.connected()).to.equal(true);
    expect(events).to.deep.equal(['connected first']);
    expect(logs.join('\n')).to.match(/warn the daemon 127\.0\.0\.1:\d+ is unreachable for \d+\.\d s/);
  });

  it('holds an answered stream through an outage, then ends it so the proxy resumes with its version', async () => {
    await connectThenLoseTheDaemon();
    await new Promise((r) => setTimeout(r, 700));
    expect(client.connected, 'the proxy is not told while the daemon is away').to.equal(true);
    expect(proxy.disconnectedForMs()).to.be.above(500);
    daemon = new ScriptedAds('sotw');
    answerClusters(daemon, ['c1', 'c2']);
    await daemon.start(port);
    await daemon.until(() => applied.length === 2, 5000);
    expect(daemon.streams[0].requests[0]).to.include({ version_info: 'c1', response_nonce: '' });
    expect([...applied[1].keys()]).to.deep.equal(['c1', 'c2']);
    expect(events).to.deep.equal(['connected first', 'disconnected', 'connected after outage']);
    expect(logs.join('\n')).to.match(/lost the daemon .*proxies keep their last good config/).and.match(/answers again after \d+\.\d s/);
  });

  it('passes a refusal (PERMISSION_DENIED) to the proxy at once', async () => {
    daemon = new ScriptedAds('sotw');
    daemon.onRequest = (stream) => stream.call.emit('error', { code: grpc.status.PERMISSION_DENIED, details: 'not this identity' });
    await daemon.start(port);
    const ended: string[] = [];
    const probe = new XdsClient(
      { address: `unix:${path.join(dir, 'XDS')}`, node: { id: 'n', cluster: 'c', metadata: {} }, wildcardTypes: [TypeUrl.Cluster], backoff: { initialMs: 5000, maxMs: 5000 } },
      { log: () => undefined, apply: () => undefined, attemptFailed: (reason) => ended.push(reason) },
    );
    probe.start();
    try {
      await daemon.until(() => ended.length > 0, 3000);
      expect(ended[0]).to.equal('PERMISSION_DENIED: not this identity');
    } finally {
      probe.stop();
    }
  });

  it('ends held streams when the agent stops, without waiting for the daemon', async () => {
    await connectThenLoseTheDaemon();
    const started = Date.now();
    await proxy.stop();
    expect(Date.now() - started).to.be.below(2000);
  });
});

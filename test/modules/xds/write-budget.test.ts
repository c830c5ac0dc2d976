import { expect } from 'chai';
import { GenerateRequest, XdsGenerator, XdsResource } from '../../../src/modules/model/generator';
import { defaultLoggingOptions, Logging } from '../../../src/modules/logging';
import { XdsObserver } from '../../../src/modules/xds/observer';
import { XdsServer, XdsServerOptions } from '../../../src/modules/xds/server';
import { PushContext } from '../../../src/modules/model/push-context';
import { FULL_CHANGE } from '../../../src/modules/xds/push-plan';
import { TypeUrl } from '../../../src/modules/envoy/type-urls';
import { DeltaClient, resourcesOf, sidecarNode, SotwClient } from '../../helpers/ads-client';
import { pushOf } from '../../helpers/push';
import { StallingDeltaClient } from '../../helpers/stalling-ads-client';

/** CDS of `count` clusters of about `size` bytes each, the same for every proxy. */
class LargeClusters implements XdsGenerator {
  private readonly resources: XdsResource[];

  constructor(count: number, size: number) {
    this.resources = Array.from({ length: count }, (_, i) => {
      const name = `outbound|80||svc-${i}.example.com`;
      // Cluster { name = 1; alt_stat_name = 28 }: the padding makes the body as large as asked.
      const padding = Buffer.alloc(size, 'x');
      const body = Buffer.concat([field(1, Buffer.from(name)), field(28, padding)]);
      return { name, body };
    });
  }

  generate(request: GenerateRequest): XdsResource[] {
    return request.typeUrl === TypeUrl.Cluster ? this.resources : [];
  }
}

function field(number: number, value: Buffer): Buffer {
  return Buffer.concat([varint((number << 3) | 2), varint(value.length), value]);
}

function varint(n: number): Buffer {
  const out: number[] = [];
  while (n > 0x7f) {
    out.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  out.push(n);
  return Buffer.from(out);
}

class CountingObserver implements XdsObserver {
  sendErrors = 0;
  writeTimeouts = 0;
  internalErrors = 0;
  connections(): void {}
  pushed(): void {}
  encoded(): void {}
  sendError(): void {
    this.sendErrors += 1;
  }
  buildError(): void {}
  rejected(): void {}
  rejectCleared(): void {}
  expiredNonce(): void {}
  queued(): void {}
  converged(): void {}
  internalError(): void {
    this.internalErrors += 1;
  }
  writeTimeout(): void {
    this.writeTimeouts += 1;
  }
}

/** An xDS server on a free loopback port serving `generator` for sidecars, with the given push and write limits. */
async function startServer(
  generator: XdsGenerator, limits: Pick<XdsServerOptions, 'pushConcurrency' | 'maxBytesInFlight' | 'maxResponsesInPreparation'>, observer: XdsObserver, currentPush: () => PushContext,
): Promise<{ server: XdsServer; port: number }> {
  const logging = new Logging('pilot-discovery');
  logging.configure({ ...defaultLoggingOptions('pilot-discovery'), defaultOutputLevel: 'error' });
  const server = new XdsServer({
    generators: new Map([['', generator]]),
    deltaEnabled: true,
    maxReceiveMessageBytes: 4 * 1024 * 1024,
    maxConcurrentStreams: 1000,
    keepaliveIntervalMs: 30_000,
    keepaliveTimeoutMs: 10_000,
    newStreamsPerSecond: 10_000,
    controlPlaneId: 'test',
    logger: logging.scope('ads'),
    observer,
    currentPush,
    ...limits,
  });
  return { server, port: await server.start('127.0.0.1', 0) };
}

describe('xDS responses under a write budget smaller than one response, two in preparation at a time', function () {
  this.timeout(30_000);
  const CLUSTERS = 40;
  let server: XdsServer;
  let port: number;
  const observer = new CountingObserver();
  const clients: Array<{ close(): void }> = [];

  before(async () => {
    const push = pushOf('');
    ({ server, port } = await startServer(
      new LargeClusters(CLUSTERS, 16 * 1024),
      // Each response is about 650 KiB: every one has to wait for the others to be written. And only two are generated at a time.
      { pushConcurrency: 10, maxBytesInFlight: 64 * 1024, maxResponsesInPreparation: 2 },
      observer,
      () => push,
    ));
  });

  after(async () => {
    for (const c of clients) c.close();
    await server.stop(100);
  });

  it('answers many proxies connecting at once, each in full, one response at a time', async () => {
    const sotw = Array.from({ length: 12 }, (_, i) => new SotwClient(port, sidecarNode(`10.8.0.${i + 1}`, 'foo')));
    const delta = Array.from({ length: 12 }, (_, i) => new DeltaClient(port, sidecarNode(`10.8.1.${i + 1}`, 'foo')));
    clients.push(...sotw, ...delta);
    // Some streams go away before they are answered: their place in the budget must come back.
    const leaving = Array.from({ length: 4 }, (_, i) => new SotwClient(port, sidecarNode(`10.8.2.${i + 1}`, 'foo')));
    for (const c of [...sotw, ...leaving]) c.send({ type_url: TypeUrl.Cluster });
    for (const c of delta) c.send({ type_url: TypeUrl.Cluster });
    for (const c of leaving) c.close();

    const answers = await Promise.all([...sotw, ...delta].map((c) => c.next(TypeUrl.Cluster, 20_000)));
    for (const res of answers) {
      // Decoded Clusters (state of the world) carry `name`; delta resources carry theirs beside.
      const names = resourcesOf(res).map((r) => (r.__name ?? r.name) as string);
      expect(names).to.have.length(CLUSTERS);
      expect(names[CLUSTERS - 1]).to.equal(`outbound|80||svc-${CLUSTERS - 1}.example.com`);
    }
    expect(observer.writeTimeouts).to.equal(0);
    expect(observer.internalErrors).to.equal(0);
  });
});

/** CDS of `count` clusters of about `size` bytes each, whose bodies change with every push version. */
class VersionedClusters implements XdsGenerator {
  private made?: { version: string; resources: XdsResource[] };

  constructor(
    private readonly count: number,
    private readonly size: number,
  ) {}

  generate(request: GenerateRequest): XdsResource[] {
    if (request.typeUrl !== TypeUrl.Cluster) return [];
    const { version } = request.push;
    if (this.made?.version !== version) {
      const resources = Array.from({ length: this.count }, (_, i) => {
        const name = `outbound|80||svc-${i}.example.com`;
        const statName = Buffer.alloc(this.size, `v${version}.`);
        return { name, body: Buffer.concat([field(1, Buffer.from(name)), field(28, statName)]) };
      });
      this.made = { version, resources };
    }
    return this.made.resources;
  }
}

describe('xDS pushes while a proxy has stopped reading, one push at a time (PILOT_PUSH_THROTTLE=1)', function () {
  this.timeout(30_000);
  let server: XdsServer;
  let port: number;
  let push = pushOf('', '1');
  const observer = new CountingObserver();
  const clients: Array<{ close(): void }> = [];

  before(async () => {
    // About 2.5 MiB a response: far more than gRPC's flow-control window lets through unread.
    ({ server, port } = await startServer(new VersionedClusters(40, 64 * 1024), { pushConcurrency: 1 }, observer, () => push));
  });

  after(async () => {
    for (const c of clients) c.close();
    await server.stop(100);
  });

  /** The version of svc-0's cluster in a response (its alt_stat_name starts with `v<version>.`). */
  const versionOf = (response: Record<string, unknown>): string => String(resourcesOf(response)[0].alt_stat_name).split('.')[0];

  it('reaches the proxies that read without waiting for one that does not', async () => {
    // Connected first, so its pushes are the first in the queue. It reads its first response, then nothing.
    const stalled = new StallingDeltaClient(port, sidecarNode('10.9.0.1', 'foo'), TypeUrl.Cluster, 1);
    clients.push(stalled);
    await stalled.stalled();
    const reader = new DeltaClient(port, sidecarNode('10.9.0.2', 'foo'));
    clients.push(reader);
    reader.send({ type_url: TypeUrl.Cluster });
    reader.ack(await reader.next(TypeUrl.Cluster, 10_000));

    // The stalled proxy's response to this push cannot be written out: it does not read.
    push = pushOf('', '2');
    server.pushAll(push, FULL_CHANGE, Date.now());
    const second = await reader.next(TypeUrl.Cluster, 5000);
    expect(versionOf(second)).to.equal('v2');
    reader.ack(second);

    // Nor can the next one, which waits behind it on that stream, not in the queue.
    push = pushOf('', '3');
    server.pushAll(push, FULL_CHANGE, Date.now());
    expect(versionOf(await reader.next(TypeUrl.Cluster, 5000))).to.equal('v3');
    expect(observer.internalErrors).to.equal(0);
  });
});

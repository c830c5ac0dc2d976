import { expect } from 'chai';
import { createHash } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { FramePool, MAX_POOLED_FRAME, MIN_POOLED_FRAME, poolServerFrames } from '../../../src/modules/xds/frame-pool';
import { MessageParts } from '../../../src/modules/envoy/wire';

describe('xDS: frame pool', () => {
  it('hands out frames of the size class, reuses given-back ones, and keeps no more than its limit', () => {
    const pool = new FramePool(3 * 256 * 1024);
    const a = pool.take(200 * 1024)!;
    const b = pool.take(129 * 1024)!;
    expect([a.length, b.length]).to.deep.equal([256 * 1024, 256 * 1024]);
    expect(pool.take(MIN_POOLED_FRAME - 1)).to.equal(undefined);
    expect(pool.take(MAX_POOLED_FRAME + 1)).to.equal(undefined);
    pool.give(a);
    pool.give(b);
    expect(pool.heldBytes).to.equal(512 * 1024);
    const again = pool.take(256 * 1024)!;
    expect(again === a || again === b).to.equal(true);
    expect(pool.take(100 * 1024)!.length).to.equal(128 * 1024);
    const c = pool.take(256 * 1024)!;
    const d = pool.take(256 * 1024)!;
    pool.give(again);
    pool.give(c);
    pool.give(d);
    pool.give(Buffer.allocUnsafeSlow(256 * 1024));
    expect(pool.heldBytes).to.equal(3 * 256 * 1024);
    expect(pool.stats).to.deep.equal({ taken: 6, reused: 2, kept: 5, dropped: 1, evicted: 0 });
  });

  it('at its limit, lets go of the size class taken least recently for a frame of a more recent one', () => {
    const pool = new FramePool(64 * 1024);
    // One phase's frames fill the pool: four of 16 KiB.
    const early = [1, 2, 3, 4].map(() => pool.take(16 * 1024)!);
    early.forEach((f) => pool.give(f));
    expect(pool.heldBytes).to.equal(64 * 1024);
    // The next phase takes 32 KiB frames; giving one back lets two of the old class go.
    const later = [pool.take(32 * 1024)!, pool.take(32 * 1024)!];
    pool.give(later[0]);
    expect(pool.heldBytes).to.equal(64 * 1024);
    expect(pool.stats).to.include({ kept: 5, dropped: 0, evicted: 2 });
    expect(pool.take(32 * 1024)).to.equal(later[0]);
    // A frame of the stale class does not push out the recent one: it is dropped, and
    // nothing is let go for it.
    pool.give(later[0]);
    pool.give(later[1]);
    expect(pool.stats).to.include({ kept: 7, evicted: 4 });
    pool.give(Buffer.allocUnsafeSlow(16 * 1024));
    expect(pool.stats).to.include({ dropped: 1, evicted: 4 });
    expect(pool.heldBytes).to.equal(64 * 1024);
  });

  describe('on a real gRPC server stream', () => {
    const method = {
      path: '/test.Frames/Stream',
      requestStream: false,
      responseStream: true,
      requestSerialize: (b: Buffer) => b,
      requestDeserialize: (b: Buffer) => b,
      responseSerialize: (m: Buffer | MessageParts) => m as Buffer,
      responseDeserialize: (b: Buffer) => b,
    };
    /** The i-th message of a stream: `size` bytes that differ by stream and index, in two parts. */
    const message = (stream: number, i: number, size: number): MessageParts => {
      const body = Buffer.alloc(size, (stream * 31 + i) % 251);
      body.writeUInt32BE(stream, 0);
      body.writeUInt32BE(i, 4);
      return new MessageParts([body.subarray(0, 1000), body.subarray(1000)]);
    };
    const digest = (b: Buffer | Uint8Array) => createHash('sha256').update(b).digest('hex');

    let server: grpc.Server;
    let client: grpc.Client;
    let pool: FramePool;

    before(async () => {
      pool = new FramePool(64 * 1024 * 1024);
      poolServerFrames(pool);
      server = new grpc.Server();
      server.addService({ Stream: method }, {
        // The request says: stream id, message count, message size.
        Stream: (call: grpc.ServerWritableStream<Buffer, Buffer | MessageParts>) => {
          const [id, count, size] = [call.request.readUInt32BE(0), call.request.readUInt32BE(4), call.request.readUInt32BE(8)];
          let i = 0;
          const next = (): void => {
            if (i === count) return void call.end();
            call.write(message(id, i++, size), next);
          };
          next();
        },
      });
      const port = await new Promise<number>((resolve, reject) => server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))));
      client = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure(), { 'grpc.max_receive_message_length': -1 });
    });
    after(() => {
      client.close();
      server.forceShutdown();
    });

    const receive = (id: number, count: number, size: number): Promise<string[]> =>
      new Promise((resolve, reject) => {
        const request = Buffer.alloc(12);
        request.writeUInt32BE(id, 0);
        request.writeUInt32BE(count, 4);
        request.writeUInt32BE(size, 8);
        const got: string[] = [];
        const call = client.makeServerStreamRequest(method.path, method.requestSerialize, method.responseDeserialize, request);
        call.on('data', (b: Buffer) => got.push(digest(b)));
        call.on('error', reject);
        call.on('end', () => resolve(got));
      });

    /** The digests `receive(id, count, size)` must return: every message of that stream, in order. */
    const sent = (id: number, count: number, size: number): string[] => Array.from({ length: count }, (_, i) => digest(message(id, i, size).toBuffer()));

    it('delivers every large message intact to concurrent streams while their frames are reused', async () => {
      const before = { ...pool.stats };
      const streams = [1, 2, 3, 4];
      const sizes = [150 * 1024, 300 * 1024, 700 * 1024, 150 * 1024];
      const received = await Promise.all(streams.map((id, k) => receive(id, 25, sizes[k])));
      streams.forEach((id, k) => {
        expect(received[k]).to.deep.equal(sent(id, 25, sizes[k]));
      });
      expect(pool.stats.taken - before.taken).to.equal(100);
      expect(pool.stats.reused - before.reused).to.be.greaterThan(50);
      expect(pool.stats.kept - before.kept).to.equal(100);
    });

    it('delivers every message intact while a small pool lets go of the size class of an earlier phase', async () => {
      // Room for one frame of 1 MiB: the second phase's frames push out the first's.
      const small = new FramePool(1024 * 1024);
      poolServerFrames(small);
      try {
        const first = await Promise.all([1, 2].map((id) => receive(id, 10, 200 * 1024)));
        const second = await Promise.all([3, 4].map((id) => receive(id, 10, 600 * 1024)));
        [1, 2].forEach((id, k) => expect(first[k]).to.deep.equal(sent(id, 10, 200 * 1024)));
        [3, 4].forEach((id, k) => expect(second[k]).to.deep.equal(sent(id, 10, 600 * 1024)));
        expect(small.stats.evicted).to.be.greaterThan(0);
        expect(small.stats.reused).to.be.greaterThan(10);
        expect(small.heldBytes).to.be.at.most(1024 * 1024);
      } finally {
        poolServerFrames(pool);
      }
    });

    it('leaves small messages to grpc-js, intact', async () => {
      const before = { ...pool.stats };
      const got = await receive(9, 10, 2000);
      expect(got).to.deep.equal(sent(9, 10, 2000));
      expect(pool.stats).to.deep.equal(before);
    });

    it('keeps serving after a client cancels a stream with frames in flight, and gives no frame back twice', async () => {
      const before = { ...pool.stats };
      const request = Buffer.alloc(12);
      request.writeUInt32BE(7, 0);
      request.writeUInt32BE(1000, 4);
      request.writeUInt32BE(1024 * 1024, 8);
      const call = client.makeServerStreamRequest(method.path, method.requestSerialize, method.responseDeserialize, request);
      call.on('error', () => undefined); // CANCELLED, as asked
      await new Promise<void>((resolve) => call.once('data', () => resolve()));
      call.cancel();
      await new Promise((resolve) => setTimeout(resolve, 200));
      // Every frame taken was either given back after its write completed, or left behind: none is kept twice.
      const taken = pool.stats.taken - before.taken;
      const kept = pool.stats.kept - before.kept;
      expect(taken).to.be.greaterThan(0);
      expect(kept).to.be.at.most(taken);
      // The server still serves afterwards.
      expect(await receive(8, 3, 100 * 1024)).to.have.length(3);
    });
  });
});

/**
 * The bench's client transport (bench/push/grpc-stream.ts): gRPC framing over node:http2,
 * against a real grpc-js server for what crosses the wire, and against a bare HTTP/2 server
 * for the ways a call can end that grpc-js would not produce.
 */
import * as grpc from '@grpc/grpc-js';
import { expect } from 'chai';
import { createHash } from 'node:crypto';
import * as http2 from 'node:http2';
import { AddressInfo } from 'node:net';
import { GrpcConnection, MessageReader, StreamHandlers } from '../../bench/push/grpc-stream';

const METHOD = '/bench.Echo/Chat';
const identity = (b: Buffer): Buffer => b;

function framed(message: Buffer, flag = 0): Buffer {
  const head = Buffer.alloc(5);
  head[0] = flag;
  head.writeUInt32BE(message.length, 1);
  return Buffer.concat([head, message]);
}

function pattern(size: number, seed: number): Buffer {
  const b = Buffer.alloc(size);
  for (let i = 0; i < size; i++) b[i] = (i * 31 + seed) & 0xff;
  return b;
}

const digest = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

/** Collects a call's outcome; `ended` resolves with 'end' or the error text. */
function collector(): StreamHandlers & { messages: Buffer[]; ended: Promise<string> } {
  let settle!: (s: string) => void;
  const ended = new Promise<string>((r) => (settle = r));
  const messages: Buffer[] = [];
  return {
    messages,
    ended,
    // The buffer is valid only during the call: keep a copy.
    onMessage: (m) => messages.push(Buffer.from(m)),
    onError: (e) => settle(e),
    onEnd: () => settle('end'),
  };
}

describe('bench:push: the client transport (grpc-stream)', function () {
  this.timeout(30_000);

  describe('MessageReader', () => {
    const sizes = [0, 1, 4, 5, 6, 100, 4096, 4097, 70_000];
    const messages = sizes.map((n, i) => pattern(n, i));
    const wire = Buffer.concat(messages.map((m) => framed(m)));

    for (const chunkSize of [1, 2, 3, 5, 7, 4096, 16_384, wire.length]) {
      it(`splits messages cut into ${chunkSize}-byte chunks`, () => {
        const got: string[] = [];
        const reader = new MessageReader((m) => got.push(digest(m)));
        for (let i = 0; i < wire.length; i += chunkSize) reader.push(wire.subarray(i, i + chunkSize));
        expect(got).to.deep.equal(messages.map(digest));
        expect(reader.partial).to.equal(false);
      });
    }

    it('hands over a message that spans chunks intact even when the handler keeps only a copy', () => {
      // Two big messages in a row, each assembled in a reused buffer: the second must not
      // show through the first's copy.
      const a = pattern(200_000, 1);
      const b = pattern(200_000, 2);
      const copies: Buffer[] = [];
      const reader = new MessageReader((m) => copies.push(Buffer.from(m)));
      const w = Buffer.concat([framed(a), framed(b)]);
      for (let i = 0; i < w.length; i += 16_384) reader.push(w.subarray(i, i + 16_384));
      expect(copies.map(digest)).to.deep.equal([digest(a), digest(b)]);
    });

    it('refuses a compressed message and one over the size limit, naming which', () => {
      expect(() => new MessageReader(() => undefined).push(framed(Buffer.from('x'), 1))).to.throw(/compressed message \(flag 1\)/);
      expect(() => new MessageReader(() => undefined, 10).push(framed(Buffer.alloc(11)))).to.throw(/message of 11 bytes, more than the 10 allowed/);
    });

    it('knows a message cut off in the middle', () => {
      const reader = new MessageReader(() => undefined);
      reader.push(framed(pattern(1000, 3)).subarray(0, 500));
      expect(reader.partial).to.equal(true);
      reader.release();
      expect(reader.partial).to.equal(false);
    });
  });

  describe('against a grpc-js server', () => {
    let server: grpc.Server;
    let port: number;
    /** What the server received, per call, and the metadata it saw. */
    const seen: Array<{ metadata: grpc.Metadata; received: string[]; cancelled: Promise<void> }> = [];
    /** What the server does once the client's first message arrives, by its text. */
    const scripts: Record<string, (call: grpc.ServerDuplexStream<Buffer, Buffer>) => void> = {
      echo: (call) => {
        for (const size of [0, 10, 70_000, 3 * 1024 * 1024]) call.write(pattern(size, size & 0xff));
      },
      finish: (call) => call.end(),
      fail: (call) => call.emit('error', { code: grpc.status.NOT_FOUND, details: 'no such resource: a/b%c' }),
      wait: () => undefined,
    };

    before(async () => {
      server = new grpc.Server();
      server.register(
        METHOD,
        (call: grpc.ServerDuplexStream<Buffer, Buffer>) => {
          let cancelledResolve!: () => void;
          const entry = { metadata: call.metadata, received: [] as string[], cancelled: new Promise<void>((r) => (cancelledResolve = r)) };
          seen.push(entry);
          call.on('cancelled', () => cancelledResolve());
          call.on('data', (b: Buffer) => {
            entry.received.push(digest(b));
            if (entry.received.length === 1) scripts[b.toString('utf8', 0, Math.min(b.length, 6))]?.(call);
          });
        },
        identity,
        identity,
        'bidi',
      );
      port = await new Promise<number>((resolve, reject) =>
        server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))),
      );
    });
    after(() => server.forceShutdown());
    beforeEach(() => (seen.length = 0));

    for (const windowBytes of [0, 64 * 1024 * 1024]) {
      it(`carries messages both ways intact, with metadata (window ${windowBytes || 'default'})`, async () => {
        const conn = new GrpcConnection(`127.0.0.1:${port}`, { windowBytes });
        const c = collector();
        const call = conn.call(METHOD, { 'bench-client': '42' }, c);
        const sent = [Buffer.from('echo'), pattern(100_000, 9), Buffer.alloc(0)];
        for (const m of sent) call.write(m);
        await waitUntil(() => c.messages.length === 4 && seen[0]?.received.length === 3);
        expect(c.messages.map((m) => m.length)).to.deep.equal([0, 10, 70_000, 3 * 1024 * 1024]);
        expect(c.messages.map(digest)).to.deep.equal([0, 10, 70_000, 3 * 1024 * 1024].map((n) => digest(pattern(n, n & 0xff))));
        expect(seen[0].received).to.deep.equal(sent.map(digest));
        expect(seen[0].metadata.get('bench-client')).to.deep.equal(['42']);
        call.cancel();
        await seen[0].cancelled;
        conn.close();
      });
    }

    /** How a call that sends `first` ends: 'end' or the error text. */
    const outcome = async (first: string, method = METHOD): Promise<string> => {
      const conn = new GrpcConnection(`127.0.0.1:${port}`, { windowBytes: 0 });
      const c = collector();
      conn.call(method, {}, c).write(Buffer.from(first));
      const ended = await c.ended;
      conn.close();
      return ended;
    };

    it('reports the end of a call with status OK as its end', async () => {
      expect(await outcome('finish')).to.equal('end');
    });

    it('reports a failed call with its status code and decoded message', async () => {
      expect(await outcome('fail')).to.equal('5 no such resource: a/b%c');
    });

    it('reports an unknown method as the server answers it', async () => {
      expect(await outcome('x', '/bench.Echo/Nothing')).to.match(/^12 /);
    });

    it('reports a server that goes away mid-call', async () => {
      const other = new grpc.Server();
      other.register(METHOD, () => undefined, identity, identity, 'bidi');
      const p = await new Promise<number>((resolve, reject) =>
        other.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, n) => (e ? reject(e) : resolve(n))),
      );
      const conn = new GrpcConnection(`127.0.0.1:${p}`, { windowBytes: 0 });
      const c = collector();
      conn.call(METHOD, {}, c).write(Buffer.from('wait'));
      await new Promise((r) => setTimeout(r, 100));
      other.forceShutdown();
      expect(await c.ended).to.not.equal('end');
      conn.close();
    });

    it('reports a refused connection', async () => {
      const conn = new GrpcConnection('127.0.0.1:1', { windowBytes: 0 });
      const c = collector();
      conn.call(METHOD, {}, c);
      expect(await c.ended).to.match(/ECONNREFUSED/);
      conn.close();
    });
  });

  describe('against a bare HTTP/2 server', () => {
    let server: http2.Http2Server;
    let port: number;
    let respond: (stream: http2.ServerHttp2Stream) => void;

    before(async () => {
      server = http2.createServer();
      server.on('stream', (stream) => {
        // A server-side reset also errors the server's own end of the stream.
        stream.on('error', () => undefined);
        respond(stream);
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      port = (server.address() as AddressInfo).port;
    });
    after(() => new Promise<void>((r) => server.close(() => r())));

    const outcome = async (): Promise<string> => {
      const conn = new GrpcConnection(`127.0.0.1:${port}`, { windowBytes: 0 });
      const c = collector();
      conn.call(METHOD, {}, c);
      const ended = await c.ended;
      conn.close();
      return ended;
    };

    it('reports a non-200 HTTP status', async () => {
      respond = (s) => s.respond({ ':status': 503 }, { endStream: true });
      expect(await outcome()).to.equal('HTTP status 503');
    });

    it('reports a stream that ends in the middle of a message', async () => {
      respond = (s) => {
        s.respond({ ':status': 200, 'content-type': 'application/grpc' });
        s.end(framed(pattern(1000, 1)).subarray(0, 600));
      };
      expect(await outcome()).to.equal('the stream closed in the middle of a message');
    });

    it('reports a stream that ends without a grpc-status', async () => {
      respond = (s) => {
        s.respond({ ':status': 200, 'content-type': 'application/grpc' });
        s.end();
      };
      expect(await outcome()).to.match(/closed without a status/);
    });

    it('reports a reset stream', async () => {
      respond = (s) => s.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
      expect(await outcome()).to.match(/NGHTTP2_INTERNAL_ERROR|code 2/);
    });

    it('fails a call sent a compressed message instead of handing it over', async () => {
      respond = (s) => {
        s.respond({ ':status': 200, 'content-type': 'application/grpc' });
        s.write(framed(Buffer.from('zipped'), 1));
      };
      expect(await outcome()).to.match(/compressed message/);
    });

    it('reports a trailers-only answer with its status', async () => {
      respond = (s) => s.respond({ ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '14', 'grpc-message': 'try%20later' }, { endStream: true });
      expect(await outcome()).to.equal('14 try later');
    });
  });
});

async function waitUntil(done: () => boolean, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > until) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
}

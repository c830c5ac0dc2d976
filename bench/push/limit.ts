/**
 * The transport-limit server (a child process of the bench, so its CPU and RSS are its own,
 * like the daemon's): the same ADS service and methods on the same grpc-js, serving the same
 * clients the same bytes the daemon sent them (captured by the workers, capture.ts), with no
 * xDS logic at all. A stream is known by its `bench-client` metadata; it gets its connect
 * responses as soon as it opens and each push phase's responses when the bench says so.
 *
 * Per stream one response at a time, each written when the previous one's write has been
 * taken (as the daemon does), under the same kind of budget of bytes in flight, so its memory
 * is bounded the same way. Requests are read and dropped.
 */
import * as grpc from '@grpc/grpc-js';
import { Semaphore } from '../../src/modules/shared/semaphore';
import { assemble, CapturedResponse, readCapture, sizeOf } from './capture';
import type { LimitCommand, LimitReply } from './protocol';

const SERVICE = 'envoy.service.discovery.v3.AggregatedDiscoveryService';
const identity = (b: Buffer): Buffer => b;

interface Recorded {
  frames: Buffer[];
  byPhase: Map<number, CapturedResponse[]>;
}

const recorded = new Map<number, Recorded>();
const streams = new Set<ReplayStream>();
let budget = new Semaphore(64 << 20);

class ReplayStream {
  private chain: Promise<void> = Promise.resolve();
  private closed = false;
  private abort: (() => void) | undefined;

  constructor(
    private readonly call: grpc.ServerDuplexStream<Buffer, Buffer>,
    private readonly client: Recorded,
  ) {
    call.on('data', () => undefined);
    const end = () => {
      this.closed = true;
      this.abort?.();
      streams.delete(this);
    };
    call.on('cancelled', end);
    call.on('error', end);
    call.on('end', () => {
      call.end();
      end();
    });
  }

  replay(phase: number): void {
    for (const r of this.client.byPhase.get(phase) ?? []) this.chain = this.chain.then(() => this.write(r));
  }

  private async write(r: CapturedResponse): Promise<void> {
    if (this.closed) return;
    const size = sizeOf(this.client.frames, r);
    await budget.acquire(size);
    try {
      if (this.closed) return;
      const body = assemble(this.client.frames, r);
      // grpc-js never calls back for a cancelled call: the stream's end resolves it instead.
      await new Promise<void>((resolve) => {
        this.abort = resolve;
        this.call.write(body, () => resolve());
      });
      this.abort = undefined;
    } finally {
      budget.release(size);
    }
  }
}

function serve(call: grpc.ServerDuplexStream<Buffer, Buffer>): void {
  const index = Number(call.metadata.get('bench-client')[0]);
  const client = recorded.get(index);
  if (!client) {
    call.emit('error', { code: grpc.status.NOT_FOUND, details: `no captured responses for bench-client ${index}` });
    return;
  }
  const stream = new ReplayStream(call, client);
  streams.add(stream);
  stream.replay(0);
}

function load(files: string[]): { clients: number; responses: number } {
  let responses = 0;
  for (const file of files) {
    const capture = readCapture(file);
    for (const c of capture.clients) {
      const byPhase = new Map<number, CapturedResponse[]>();
      for (const r of c.responses) {
        const list = byPhase.get(r.phase) ?? [];
        list.push(r);
        byPhase.set(r.phase, list);
      }
      recorded.set(c.index, { frames: capture.frames, byPhase });
      responses += c.responses.length;
    }
  }
  return { clients: recorded.size, responses };
}

async function listen(): Promise<{ server: grpc.Server; port: number }> {
  const server = new grpc.Server({ 'grpc.max_receive_message_length': -1, 'grpc.max_send_message_length': -1 });
  const method = (name: string): grpc.MethodDefinition<Buffer, Buffer> => ({
    path: `/${SERVICE}/${name}`,
    requestStream: true,
    responseStream: true,
    requestSerialize: identity,
    requestDeserialize: identity,
    responseSerialize: identity,
    responseDeserialize: identity,
  });
  server.addService(
    { StreamAggregatedResources: method('StreamAggregatedResources'), DeltaAggregatedResources: method('DeltaAggregatedResources') },
    { StreamAggregatedResources: serve, DeltaAggregatedResources: serve },
  );
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  return { server, port };
}

let server: grpc.Server | undefined;

function reply(r: LimitReply): void {
  process.send?.(r);
}

process.on('message', (cmd: LimitCommand) => {
  void (async () => {
    switch (cmd.t) {
      case 'load': {
        budget = new Semaphore(cmd.budgetBytes);
        const { clients, responses } = load(cmd.files);
        const l = await listen();
        server = l.server;
        reply({ t: 'loaded', id: cmd.id, port: l.port, clients, responses });
        break;
      }
      case 'replay':
        for (const s of streams) s.replay(cmd.phase);
        reply({ t: 'ok', id: cmd.id });
        break;
      case 'stop':
        server?.forceShutdown();
        reply({ t: 'ok', id: cmd.id });
        setTimeout(() => process.exit(0), 100).unref();
        break;
    }
  })().catch((err: Error) => reply({ t: 'error', id: cmd.id, message: err.stack ?? String(err) }));
});

process.on('disconnect', () => process.exit(0));
process.on('SIGINT', () => undefined);

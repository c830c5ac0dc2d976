/**
 * Reused memory for the frames grpc-js writes on the daemon's server streams.
 *
 * grpc-js copies every message it sends into a frame of its own (`serializeMessage`: the
 * 5-byte prefix, then the message), a fresh buffer outside V8's heap each time. A connect
 * storm writes about 100 MiB of frames a second here, and that allocation is what starts
 * most of the daemon's garbage collections ("external memory pressure": in one connect, 575
 * scavenges and 92 full collections whose concurrent marking used more CPU than the main
 * thread). Frames of 4 KiB and more are taken here instead, and given back once the write's
 * callback says the socket has them (Node's HTTP/2 completes a write only after its bytes
 * went out); a frame whose write fails or is never made is simply left to the collector.
 *
 * The seam is grpc-js's BaseServerInterceptingCall (exported from its build): sendMessage
 * tells serializeMessage, which it calls synchronously, to take the frame from the pool, and
 * learns when the write is done. test/modules/xds/frame-pool.test.ts fails if a grpc-js
 * upgrade moves it.
 */
import type { BaseServerInterceptingCall } from '@grpc/grpc-js/build/src/server-interceptors';

/** Smaller frames come from Node's shared 8 KiB pool (Buffer.allocUnsafe takes them from it below 4 KiB): not pooled. */
export const MIN_POOLED_FRAME = 4 * 1024;
/** Larger ones are rare (a whole mesh's clusters) and would pin too much memory each. */
export const MAX_POOLED_FRAME = 16 * 1024 * 1024;

export interface FramePoolStats {
  /** Frames handed out (new or reused). */
  taken: number;
  /** ...of which were reused. */
  reused: number;
  /** Frames given back and kept for reuse. */
  kept: number;
  /** Frames given back while the pool held its limit in their own size class: left to the collector. */
  dropped: number;
  /** Free frames of other size classes let go to make room for one given back. */
  evicted: number;
}

/**
 * Free frames by size class (powers of two), up to a limit of bytes held. The sizes a
 * storm asks for change as it goes (every proxy's clusters first, its routes last), so a
 * frame given back at the limit makes room by letting go of the size class taken least
 * recently: a pool full of one phase's sizes would otherwise turn the next phase's frames
 * away (in one connect, 5,000 of 8,000 frames).
 */
export class FramePool {
  private readonly free = new Map<number, Buffer[]>();
  /** When each size class was last taken, in takes. */
  private readonly lastTaken = new Map<number, number>();
  private freeBytes = 0;
  readonly stats: FramePoolStats = { taken: 0, reused: 0, kept: 0, dropped: 0, evicted: 0 };

  constructor(private readonly maxFreeBytes: number) {}

  /** A frame of at least `size` bytes (its size class); undefined when `size` is not pooled. */
  take(size: number): Buffer | undefined {
    if (size < MIN_POOLED_FRAME || size > MAX_POOLED_FRAME) return undefined;
    const sizeClass = 2 ** Math.ceil(Math.log2(size));
    this.lastTaken.set(sizeClass, ++this.stats.taken);
    const reused = this.free.get(sizeClass)?.pop();
    if (reused) {
      this.freeBytes -= sizeClass;
      this.stats.reused++;
      return reused;
    }
    // Not from Node's shared pool: the frame is ours alone for as long as we keep it.
    return Buffer.allocUnsafeSlow(sizeClass);
  }

  /** A frame from take() whose bytes are no longer needed. */
  give(frame: Buffer): void {
    const sizeClass = frame.length;
    if (this.freeBytes + sizeClass > this.maxFreeBytes && !this.makeRoom(sizeClass)) {
      this.stats.dropped++;
      return;
    }
    let list = this.free.get(sizeClass);
    if (!list) this.free.set(sizeClass, (list = []));
    list.push(frame);
    this.freeBytes += sizeClass;
    this.stats.kept++;
  }

  /** Bytes held for reuse. */
  get heldBytes(): number {
    return this.freeBytes;
  }

  /**
   * Lets go of free frames of classes taken less recently than `sizeClass` until one of it
   * fits; lets go of none when that cannot make enough room.
   */
  private makeRoom(sizeClass: number): boolean {
    const recency = this.lastTaken.get(sizeClass) ?? 0;
    const staler = [...this.free]
      .filter(([other, list]) => list.length > 0 && (this.lastTaken.get(other) ?? 0) < recency)
      .sort(([a], [b]) => (this.lastTaken.get(a) ?? 0) - (this.lastTaken.get(b) ?? 0));
    const evictable = staler.reduce((sum, [other, list]) => sum + other * list.length, 0);
    if (this.freeBytes - evictable + sizeClass > this.maxFreeBytes) return false;
    for (const [, list] of staler) {
      while (list.length > 0 && this.freeBytes + sizeClass > this.maxFreeBytes) {
        this.freeBytes -= list.pop()!.length;
        this.stats.evicted++;
      }
    }
    return true;
  }
}

/** The parts of grpc-js's server call this relies on. */
interface ServerCallInternals {
  handler: { serialize(value: unknown): Buffer };
  sendMessage(message: unknown, callback: () => void): void;
  serializeMessage(value: unknown): Buffer;
}

let pool: FramePool | undefined;
/** Set by sendMessage while it runs: where serializeMessage takes this write's frame. */
let takeFrame: ((size: number) => Buffer | undefined) | undefined;

/**
 * Makes every grpc-js server call in this process take its large frames from `framePool`
 * (the last one given wins); throws if the installed grpc-js does not have the seam.
 */
export function poolServerFrames(framePool: FramePool): void {
  const installed = pool !== undefined;
  pool = framePool;
  if (installed) return;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const calls = require('@grpc/grpc-js/build/src/server-interceptors') as { BaseServerInterceptingCall?: typeof BaseServerInterceptingCall };
  const proto = calls.BaseServerInterceptingCall?.prototype as unknown as ServerCallInternals | undefined;
  if (!proto || typeof proto.sendMessage !== 'function' || typeof proto.serializeMessage !== 'function') {
    pool = undefined;
    throw new Error('@grpc/grpc-js has no BaseServerInterceptingCall.sendMessage/serializeMessage: frames cannot be pooled with this version');
  }
  const send = proto.sendMessage;
  const serialize = proto.serializeMessage;
  proto.sendMessage = function (this: ServerCallInternals, message: unknown, callback: () => void): void {
    let frame: Buffer | undefined;
    const from = pool!;
    takeFrame = (size) => (frame = from.take(size));
    try {
      send.call(this, message, () => {
        if (frame) from.give(frame);
        callback();
      });
    } finally {
      takeFrame = undefined;
    }
  };
  proto.serializeMessage = function (this: ServerCallInternals, value: unknown): Buffer {
    const take = takeFrame;
    if (!take) return serialize.call(this, value);
    const message = this.handler.serialize(value);
    const length = message.byteLength;
    const frame = take(length + 5);
    // grpc-js's framing: not compressed, then the length, then the message.
    const out = frame ? frame.subarray(0, length + 5) : Buffer.allocUnsafe(length + 5);
    out.writeUInt8(0, 0);
    out.writeUInt32BE(length, 1);
    message.copy(out, 5);
    return out;
  };
}

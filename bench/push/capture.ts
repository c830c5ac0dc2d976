/**
 * What the clients received from the daemon, kept so the transport-limit run can write the
 * same bytes again (limit.ts). A worker keeps each distinct resource entry once (`frames`,
 * the whole `resources` field as it arrived) and each response as its head, the ids of its
 * resource entries and its tail: head + frames[ids...] + tail are the response's bytes. So
 * the capture of 2,000 proxies costs the memory of the distinct resources, not of every
 * response.
 *
 * File layout (little-endian u32 counts and lengths): frames, then per client its index and
 * responses (phase, head, ids, tail).
 */
import * as fs from 'node:fs';

export interface CapturedResponse {
  /** Index of the bench phase (0 = connect) the response arrived in. */
  phase: number;
  head: Buffer;
  /** Indexes into the capture's frames. */
  ids: Uint32Array;
  tail: Buffer;
}

export interface CapturedClient {
  index: number;
  responses: CapturedResponse[];
}

export interface Capture {
  frames: Buffer[];
  clients: CapturedClient[];
}

/** The response's bytes, assembled as the daemon assembles its own: by concatenating ready pieces. */
export function assemble(frames: readonly Buffer[], r: CapturedResponse): Buffer {
  const parts: Buffer[] = new Array(r.ids.length + 2);
  parts[0] = r.head;
  for (let i = 0; i < r.ids.length; i++) parts[i + 1] = frames[r.ids[i]];
  parts[r.ids.length + 1] = r.tail;
  return Buffer.concat(parts);
}

export function sizeOf(frames: readonly Buffer[], r: CapturedResponse): number {
  let n = r.head.length + r.tail.length;
  for (let i = 0; i < r.ids.length; i++) n += frames[r.ids[i]].length;
  return n;
}

class Out {
  private readonly fd: number;
  private pending: Buffer[] = [];
  private pendingBytes = 0;

  constructor(file: string) {
    this.fd = fs.openSync(file, 'w');
  }

  u32(n: number): void {
    const b = Buffer.allocUnsafe(4);
    b.writeUInt32LE(n);
    this.bytes(b);
  }

  bytes(b: Buffer): void {
    this.pending.push(b);
    this.pendingBytes += b.length;
    if (this.pendingBytes > 4 << 20) this.flush();
  }

  sized(b: Buffer): void {
    this.u32(b.length);
    this.bytes(b);
  }

  flush(): void {
    if (this.pending.length) fs.writeSync(this.fd, Buffer.concat(this.pending));
    this.pending = [];
    this.pendingBytes = 0;
  }

  close(): void {
    this.flush();
    fs.closeSync(this.fd);
  }
}

export function writeCapture(file: string, capture: Capture): void {
  const out = new Out(file);
  try {
    out.u32(capture.frames.length);
    for (const f of capture.frames) out.sized(f);
    out.u32(capture.clients.length);
    for (const c of capture.clients) {
      out.u32(c.index);
      out.u32(c.responses.length);
      for (const r of c.responses) {
        out.u32(r.phase);
        out.sized(r.head);
        out.u32(r.ids.length);
        out.bytes(Buffer.from(r.ids.buffer, r.ids.byteOffset, r.ids.byteLength));
        out.sized(r.tail);
      }
    }
  } finally {
    out.close();
  }
}

export function readCapture(file: string): Capture {
  const buf = fs.readFileSync(file);
  let pos = 0;
  const u32 = () => {
    const v = buf.readUInt32LE(pos);
    pos += 4;
    return v;
  };
  const take = (n: number) => {
    if (pos + n > buf.length) throw new Error(`${file}: truncated capture`);
    const b = buf.subarray(pos, pos + n);
    pos += n;
    return b;
  };
  const frames: Buffer[] = [];
  for (let n = u32(); n > 0; n--) frames.push(take(u32()));
  const clients: CapturedClient[] = [];
  for (let n = u32(); n > 0; n--) {
    const index = u32();
    const responses: CapturedResponse[] = [];
    for (let k = u32(); k > 0; k--) {
      const phase = u32();
      const head = take(u32());
      const count = u32();
      // Copied: a Uint32Array view needs 4-byte alignment.
      const ids = new Uint32Array(new Uint8Array(take(count * 4)).buffer);
      const tail = take(u32());
      for (const id of ids) if (id >= frames.length) throw new Error(`${file}: resource id ${id} out of range`);
      responses.push({ phase, head, ids, tail });
    }
    clients.push({ index, responses });
  }
  return { frames, clients };
}

/**
 * The client workers' gRPC transport: bidirectional streams over `node:http2`, framed as gRPC
 * frames them (a flag byte, a 4-byte length, the message), with no compression.
 *
 * Why not grpc-js's client, as the workers used before: it copies every received message
 * into a freshly allocated buffer and passes it through object-mode streams and microtasks.
 * A connect sends each client a 2 MiB CDS response; fresh buffers that size are mapped and
 * unmapped by the allocator each time, and the two workers spent 4x the daemon's CPU on
 * receiving, so the connect measured the clients. Here a message that arrives in one chunk
 * is handed over as a view of that chunk, and one that spans chunks is assembled in a
 * buffer from a small pool, reused once the handler has returned. On the wire it is the
 * same gRPC the daemon's other clients speak (the bench's tests check it against grpc-js).
 */
import * as http2 from 'node:http2';
import { FramePool } from '../../src/modules/xds/frame-pool';

export interface StreamHandlers {
  /** A complete message. The buffer is valid only during the call: copy what you keep. */
  onMessage(message: Buffer): void;
  /** The call failed: a transport error, a reset, or a non-zero grpc-status (text names which). */
  onError(message: string): void;
  /** The server ended the call with grpc-status 0. */
  onEnd(): void;
}

export interface ConnectionOptions {
  /** HTTP/2 flow-control window of the connection and of each stream (0: the protocol's 64 KiB). */
  windowBytes: number;
}

const HEADER_BYTES = 5;

/**
 * Buffers for messages that span chunks, reused across streams: the daemon's frame pool (free
 * buffers by power-of-two size class, least recently taken class let go first). Only messages
 * being assembled hold one, so it stays as big as the largest burst of interleaved big
 * messages, not as big as the number of streams.
 */
const assembly = new FramePool(256 * 1024 * 1024);

/** Splits a stream's DATA into gRPC messages. Exported for its tests. */
export class MessageReader {
  private readonly head = Buffer.alloc(HEADER_BYTES);
  private headFill = 0;
  private message: Buffer | undefined;
  /** The message's buffer came from the pool (outside its sizes, it is a plain allocation). */
  private messagePooled = false;
  private messageLength = 0;
  private messageFill = 0;

  constructor(
    private readonly onMessage: (message: Buffer) => void,
    private readonly maxMessageBytes = 1 << 30,
  ) {}

  /** Feeds a chunk; throws on a compressed or oversized message (the caller fails the call). */
  push(chunk: Buffer): void {
    let pos = 0;
    const end = chunk.length;
    while (pos < end) {
      if (this.message) {
        const n = Math.min(end - pos, this.messageLength - this.messageFill);
        chunk.copy(this.message, this.messageFill, pos, pos + n);
        this.messageFill += n;
        pos += n;
        if (this.messageFill === this.messageLength) this.deliverAssembled();
        continue;
      }
      let length: number;
      if (this.headFill === 0 && end - pos >= HEADER_BYTES) {
        this.checkFlag(chunk[pos]);
        length = chunk.readUInt32BE(pos + 1);
        pos += HEADER_BYTES;
      } else {
        const n = Math.min(end - pos, HEADER_BYTES - this.headFill);
        chunk.copy(this.head, this.headFill, pos, pos + n);
        this.headFill += n;
        pos += n;
        if (this.headFill < HEADER_BYTES) return;
        this.headFill = 0;
        this.checkFlag(this.head[0]);
        length = this.head.readUInt32BE(1);
      }
      if (length > this.maxMessageBytes) throw new Error(`received a message of ${length} bytes, more than the ${this.maxMessageBytes} allowed`);
      if (end - pos >= length) {
        // The whole message is in this chunk: a view, no copy.
        this.onMessage(chunk.subarray(pos, pos + length));
        pos += length;
      } else {
        const pooled = assembly.take(length);
        this.message = pooled ?? Buffer.allocUnsafe(length);
        this.messagePooled = pooled !== undefined;
        this.messageLength = length;
        this.messageFill = 0;
      }
    }
  }

  /** A message was cut off by the end of the stream. */
  get partial(): boolean {
    return this.message !== undefined || this.headFill > 0;
  }

  /** Gives back an assembly buffer held by a call that ended mid-message. */
  release(): void {
    if (this.message && this.messagePooled) assembly.give(this.message);
    this.message = undefined;
    this.headFill = 0;
  }

  private checkFlag(flag: number): void {
    if (flag !== 0) throw new Error(`received a compressed message (flag ${flag}), but the client accepts identity only`);
  }

  private deliverAssembled(): void {
    const b = this.message!;
    this.message = undefined;
    try {
      this.onMessage(b.subarray(0, this.messageLength));
    } finally {
      if (this.messagePooled) assembly.give(b);
    }
  }
}

/** One HTTP/2 connection carrying many calls. */
export class GrpcConnection {
  private readonly session: http2.ClientHttp2Session;
  private sessionError: string | undefined;

  constructor(
    private readonly authority: string,
    options: ConnectionOptions,
  ) {
    const window = options.windowBytes > 0 ? options.windowBytes : undefined;
    this.session = http2.connect(`http://${authority}`, {
      ...(window ? { settings: { initialWindowSize: window } } : {}),
      // Big responses in flight on many streams: the session's memory is bounded by the windows.
      maxSessionMemory: Number.MAX_SAFE_INTEGER,
    });
    this.session.on('error', (e) => (this.sessionError = e.message));
    if (window) this.session.once('remoteSettings', () => this.session.setLocalWindowSize(window));
  }

  /** Opens a bidirectional streaming call to `method` (`/package.Service/Method`). */
  call(method: string, metadata: Record<string, string>, handlers: StreamHandlers): GrpcCall {
    return new GrpcCall(this.session, this.authority, method, metadata, handlers, () => this.sessionError);
  }

  close(): void {
    if (!this.session.destroyed) this.session.close();
  }
}

export class GrpcCall {
  private readonly stream: http2.ClientHttp2Stream;
  private readonly reader: MessageReader;
  private done = false;

  constructor(
    session: http2.ClientHttp2Session,
    authority: string,
    method: string,
    metadata: Record<string, string>,
    private readonly handlers: StreamHandlers,
    sessionError: () => string | undefined,
  ) {
    this.reader = new MessageReader((m) => handlers.onMessage(m));
    this.stream = session.request({
      ':method': 'POST',
      ':path': method,
      ':authority': authority,
      'content-type': 'application/grpc',
      te: 'trailers',
      'grpc-accept-encoding': 'identity',
      'user-agent': 'mesh-bench-push',
      ...metadata,
    });
    const s = this.stream;
    s.on('response', (headers) => {
      const status = headers[':status'];
      if (status !== 200) return this.fail(`HTTP status ${status}`);
      // Trailers-only: the call ended before any message.
      if (headers['grpc-status'] !== undefined) this.finish(headers);
    });
    s.on('data', (chunk: Buffer) => {
      if (this.done) return;
      try {
        this.reader.push(chunk);
      } catch (e) {
        this.fail((e as Error).message);
        s.close(http2.constants.NGHTTP2_CANCEL);
      }
    });
    s.on('trailers', (trailers) => this.finish(trailers));
    s.on('error', (e: Error) => this.fail(sessionError() ?? e.message));
    s.on('close', () => {
      if (this.reader.partial) this.fail('the stream closed in the middle of a message');
      this.reader.release();
      if (!this.done) this.fail(sessionError() ?? `the stream closed without a status (HTTP/2 code ${s.rstCode})`);
    });
  }

  write(message: Buffer): void {
    if (this.done || this.stream.destroyed) return;
    const frame = Buffer.allocUnsafe(HEADER_BYTES + message.length);
    frame[0] = 0;
    frame.writeUInt32BE(message.length, 1);
    message.copy(frame, HEADER_BYTES);
    this.stream.write(frame);
  }

  /** Ends the call from the client's side, as grpc-js's cancel() does (RST_STREAM CANCEL). */
  cancel(): void {
    this.done = true;
    if (!this.stream.destroyed) this.stream.close(http2.constants.NGHTTP2_CANCEL);
  }

  private finish(meta: http2.IncomingHttpHeaders): void {
    if (this.done) return;
    const code = Number(meta['grpc-status']);
    if (code === 0) {
      this.done = true;
      this.handlers.onEnd();
    } else {
      this.fail(`${code} ${statusMessage(meta['grpc-message'])}`.trim());
    }
  }

  private fail(message: string): void {
    if (this.done) return;
    this.done = true;
    this.handlers.onError(message);
  }
}

/** grpc-message is percent-encoded; a malformed one is shown as it came. */
function statusMessage(raw: string | string[] | undefined): string {
  const text = raw === undefined ? '' : String(raw);
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

import { Duplex, PassThrough, Writable } from 'node:stream';
import type * as k8s from '@kubernetes/client-node';
import { orchLibrary } from '../orch';
import { type ClientOptions, WebSocket } from 'ws';
import { errorFromStatus } from '../orch';
import { UserError } from '../shared/user-error';

/*
 * One port-forward: @kubernetes/client-node's PortForward over a WebSocket to the API server's
 * pods/<name>/portforward (subprotocol v4.channel.k8s.io), seen as a Duplex carrying the TCP
 * stream of the pod's port.
 */

/** The handler PortForward takes (the library does not export its type). */
type WebSocketInterface = NonNullable<ConstructorParameters<typeof k8s.PortForward>[2]>;

/** The protocol the API server (kubelet) speaks for port-forward over WebSocket. */
const PROTOCOL = 'v4.channel.k8s.io';
/** A refusal's Status body, or the error channel's message, is short; more is not kept. */
const MAX_REFUSAL_BYTES = 64 * 1024;
const MAX_ERROR_TEXT = 4096;
/** How long a closing forward waits for the server's half of the closing handshake. */
const CLOSE_GRACE_MS = 2000;

/** A port-forward that could not be opened, or that failed: one line naming pod, namespace and port. */
export class PortForwardError extends UserError {}

/** What a forward is to, for messages: `port 15000 of pod a in namespace b`. */
export interface ForwardTargetName {
  readonly pod: string;
  readonly namespace: string;
  readonly port: number;
}

export function describeForward(t: ForwardTargetName): string {
  return `port ${t.port} of pod ${t.pod} in namespace ${t.namespace}`;
}

/**
 * The Duplex of one open forward. Writes go out as data-channel frames (their callback waits for
 * the socket, so a fast writer is held back); what arrives is pushed, and the WebSocket paused
 * while the reader is behind. Ending the writable side sends nothing (the v4 protocol has no
 * half-close): the connection stays until the pod side closes it or the stream is destroyed.
 */
export class ForwardStream extends Duplex {
  private ws: WebSocket | undefined;
  private paused = false;

  constructor(readonly target: ForwardTargetName) {
    super({ allowHalfOpen: false });
  }

  /** Attaches the open WebSocket; its closing ends the stream. */
  attach(ws: WebSocket): void {
    this.ws = ws;
    ws.on('close', (code: number) => {
      if (this.destroyed) return;
      // 1006: the connection went without a closing handshake (the API server or network gone).
      if (code === 1006) this.destroy(new PortForwardError(`port-forward to ${describeForward(this.target)} was cut: the connection to the orchestrator API was lost`));
      else this.push(null);
    });
    ws.on('error', (err) => this.destroy(new PortForwardError(`port-forward to ${describeForward(this.target)}: ${err.message}`)));
    if (this.destroyed) ws.terminate();
  }

  /** Data from the pod (the data channel, its port prefix already taken off by the library). */
  deliver(chunk: Buffer): void {
    if (chunk.length === 0 || this.destroyed) return;
    if (!this.push(chunk) && !this.paused) {
      this.paused = true;
      this.ws?.pause();
    }
  }

  /** The error channel's message: the forward failed inside the pod's node. */
  failed(text: string): void {
    this.destroy(new PortForwardError(`port-forward to ${describeForward(this.target)} failed: ${text.trim()}`));
  }

  override _read(): void {
    if (this.paused) {
      this.paused = false;
      this.ws?.resume();
    }
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    const ws = this.ws;
    if (!ws || ws.readyState !== WebSocket.OPEN) {
      callback(new PortForwardError(`port-forward to ${describeForward(this.target)} is closed`));
      return;
    }
    ws.send(Buffer.concat([Buffer.from([0]), chunk]), (err) => callback(err ?? null));
  }

  override _final(callback: (error?: Error | null) => void): void {
    callback();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    const ws = this.ws;
    if (ws && ws.readyState === WebSocket.OPEN) {
      ws.close(1000);
      // A server that does not answer the close must not hold the program for ws's 30 s.
      const cut = setTimeout(() => ws.terminate(), CLOSE_GRACE_MS);
      cut.unref();
      ws.once('close', () => clearTimeout(cut));
    } else if (ws && ws.readyState === WebSocket.CONNECTING) ws.terminate();
    callback(error);
  }

  // node:http calls these on its sockets; a forward has no socket options of its own.
  setTimeout(): this {
    return this;
  }
  setNoDelay(): this {
    return this;
  }
  setKeepAlive(): this {
    return this;
  }
  ref(): this {
    return this;
  }
  unref(): this {
    return this;
  }
}

/**
 * The WebSocket side PortForward uses (in place of the library's handler, which drops the API
 * server's answer to a refused upgrade): the API server's URL and credentials from the config,
 * the impersonation headers included, and a refusal turned into the API's Status message.
 */
class ForwardSocketOpener implements WebSocketInterface {
  constructor(
    private readonly kc: k8s.KubeConfig,
    private readonly target: ForwardTargetName,
    private readonly timeoutMs: number,
  ) {}

  async connect(path: string, _text: ((text: string) => boolean) | null, binary: ((stream: number, buff: Buffer) => boolean) | null): Promise<WebSocket> {
    const server = this.kc.getCurrentCluster()?.server;
    if (!server) throw new PortForwardError(`port-forward to ${describeForward(this.target)}: the orchestrator config has no current cluster`);
    const uri = `${server.replace(/^http/, 'ws').replace(/\/+$/, '')}${path}`;
    const opts: ClientOptions = {};
    await this.kc.applyToHTTPSOptions(opts);
    const what = `port-forward to ${describeForward(this.target)}`;
    return new Promise<WebSocket>((resolve, reject) => {
      const ws = new WebSocket(uri, [PROTOCOL], { ...opts, handshakeTimeout: this.timeoutMs, perMessageDeflate: false, maxPayload: 16 * 1024 * 1024 });
      let refusal: Error | undefined;
      ws.on('unexpected-response', (_req, res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size <= MAX_REFUSAL_BYTES) chunks.push(c);
        });
        const done = () => {
          const status = errorFromStatus(res.statusCode ?? 0, Buffer.concat(chunks).toString('utf8'), what);
          refusal = new PortForwardError(status.message);
          ws.terminate();
        };
        res.on('end', done);
        res.on('error', done);
      });
      ws.once('open', () => {
        if (ws.protocol !== PROTOCOL) {
          ws.terminate();
          reject(new PortForwardError(`${what}: the orchestrator API answered with subprotocol "${ws.protocol}", not ${PROTOCOL}`));
          return;
        }
        resolve(ws);
      });
      ws.on('error', (err) => reject(refusal ?? new PortForwardError(`${what}: ${openingError(err, server)}`)));
      ws.on('message', (data: Buffer, isBinary: boolean) => {
        if (!isBinary || data.length < 1) return;
        if (binary && !binary(data[0], data.subarray(1))) ws.close();
      });
    });
  }
}

function openingError(err: Error & { code?: string }, server: string): string {
  if (err.code === 'ECONNREFUSED' || err.code === 'ENOTFOUND' || err.code === 'EHOSTUNREACH' || err.code === 'ECONNRESET') return `cannot reach the orchestrator API at ${server}: ${err.message}`;
  if (/Opening handshake has timed out/.test(err.message)) return `no answer from the orchestrator API at ${server} in time`;
  return err.message;
}

/**
 * Opens a forward to `target` through the API server of `kc`: resolves once the WebSocket is
 * up (the stream then errs if the node cannot reach the port), rejects with a PortForwardError
 * carrying the API's message when the server refuses (401, 403, 404, 400).
 */
export async function openForward(kc: k8s.KubeConfig, target: ForwardTargetName, timeoutMs: number): Promise<ForwardStream> {
  const stream = new ForwardStream(target);
  let errorText = '';
  const output = new Writable({
    write(chunk: Buffer, _enc, cb) {
      stream.deliver(chunk);
      cb();
    },
  });
  const errors = new Writable({
    write(chunk: Buffer, _enc, cb) {
      if (chunk.length > 0 && errorText === '') {
        errorText = chunk.subarray(0, MAX_ERROR_TEXT).toString('utf8');
        stream.failed(errorText);
      }
      cb();
    },
  });
  // Writes do not go through the library's stdin wiring (it has no flow control); it still wants a stream.
  const input = new PassThrough();
  stream.once('close', () => input.destroy());
  const forward = new (orchLibrary().PortForward)(kc, true, new ForwardSocketOpener(kc, target, timeoutMs));
  const ws = (await forward.portForward(target.namespace, target.pod, [target.port], output, errors, input)) as WebSocket;
  stream.attach(ws);
  return stream;
}

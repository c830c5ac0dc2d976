import type * as http from 'node:http';
import * as net from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer } from 'ws';
import { ApiError, badRequest, notFound } from './errors';
import type { Store } from './store';

/*
 * pods/<name>/portforward as the real API server and kubelet speak it over WebSocket (the
 * `v4.channel.k8s.io` subprotocol @kubernetes/client-node's PortForward asks for): per
 * requested port a data channel (2i) and an error channel (2i+1), each opened by a frame holding
 * the port as 2 bytes little-endian; then the data channel carries the TCP stream of the port
 * inside the pod, and a failure to reach it is one text message on the error channel, after
 * which the connection closes. There is no cluster network: a pod's port is reached at the local
 * address a test registered for it; an unregistered port is refused as a closed port would be.
 */

export const PORT_FORWARD_PROTOCOL = 'v4.channel.k8s.io';

/** Where a pod's port really is, for the tests. */
export interface ForwardTarget {
  host: string;
  port: number;
}

/** One port-forward connection (one WebSocket, one TCP connection per port). */
interface Session {
  readonly ws: WebSocket;
  readonly tcp: net.Socket[];
}

/** A parsed portforward path: `/api/v1/namespaces/<ns>/pods/<name>/portforward`. */
export function portForwardTarget(pathname: string): { namespace: string; pod: string } | undefined {
  const m = /^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)\/portforward\/?$/.exec(pathname);
  if (!m) return undefined;
  return { namespace: decodeURIComponent(m[1]), pod: decodeURIComponent(m[2]) };
}

/** Above this many bytes queued toward the client, the pod side is paused until they are sent. */
const HIGH_WATER = 1024 * 1024;

export class PortForwards {
  private readonly targets = new Map<string, ForwardTarget>();
  private readonly sessions = new Set<Session>();
  private readonly wss = new WebSocketServer({
    noServer: true,
    perMessageDeflate: false,
    maxPayload: 16 * 1024 * 1024,
    handleProtocols: (offered) => (offered.has(PORT_FORWARD_PROTOCOL) ? PORT_FORWARD_PROTOCOL : false),
  });

  constructor(private readonly store: Store) {}

  /** Routes `podPort` of pod `namespace/pod` to the local address `target`. */
  register(namespace: string, pod: string, podPort: number, target: ForwardTarget): void {
    if (!Number.isInteger(podPort) || podPort < 1 || podPort > 65535) throw new Error(`pod port must be 1-65535, got ${podPort}`);
    this.targets.set(key(namespace, pod, podPort), { host: target.host, port: target.port });
  }

  /** Forgets one port of a pod, or all of them without `podPort`. Open forwards stay. */
  unregister(namespace: string, pod: string, podPort?: number): void {
    if (podPort !== undefined) {
      this.targets.delete(key(namespace, pod, podPort));
      return;
    }
    const prefix = `${namespace}/${pod}:`;
    for (const k of [...this.targets.keys()]) if (k.startsWith(prefix)) this.targets.delete(k);
  }

  /** Port-forward connections open now (each one WebSocket), for tests that check nothing leaks. */
  get active(): number {
    return this.sessions.size;
  }

  /** TCP connections toward registered addresses open now. */
  get activeConnections(): number {
    let n = 0;
    for (const s of this.sessions) n += s.tcp.filter((t) => !t.destroyed).length;
    return n;
  }

  /** Cuts every open port-forward without a closing handshake, as a server going away does (stop, restart). */
  endAll(): void {
    for (const session of [...this.sessions]) {
      for (const t of session.tcp) t.destroy();
      session.ws.terminate();
    }
  }

  /**
   * An upgrade request to a pod's portforward, already authenticated: checks the pod and the
   * request as the real server does, then upgrades and bridges. Throws ApiError before upgrading.
   */
  upgrade(req: http.IncomingMessage, socket: Duplex, head: Buffer, target: { namespace: string; pod: string }, query: URLSearchParams): void {
    if (req.method !== 'GET') throw new ApiError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource');
    const pod = this.store.get('/pods', target.namespace, target.pod);
    if (!pod) throw notFound('', 'pods', target.pod);
    if (!pod.spec?.nodeName) throw badRequest(`pod ${target.pod} does not have a host assigned`);
    if (pod.status?.phase !== 'Running') throw badRequest(`unable to upgrade connection: pod ${target.pod} is not running (phase ${pod.status?.phase ?? 'unknown'})`);
    const ports = parsePorts(query);
    const offered = (req.headers['sec-websocket-protocol'] ?? '').split(',').map((p) => p.trim()).filter(Boolean);
    if (!offered.includes(PORT_FORWARD_PROTOCOL)) {
      throw badRequest(`unable to upgrade connection: requested protocol(s) are not supported: [${offered.join(' ')}]; supported protocols are [${PORT_FORWARD_PROTOCOL}]`);
    }
    const podLabel = `${target.namespace}/${target.pod}`;
    const uid: string = pod.metadata.uid;
    this.wss.handleUpgrade(req, socket, head, (ws) => this.bridge(ws, ports, target, podLabel, uid));
  }

  private bridge(ws: WebSocket, ports: number[], target: { namespace: string; pod: string }, podLabel: string, uid: string): void {
    const session: Session = { ws, tcp: [] };
    this.sessions.add(session);
    let open = ports.length;
    const portDone = () => {
      if (--open === 0) endSession(session);
    };
    ws.on('close', () => {
      this.sessions.delete(session);
      for (const t of session.tcp) t.destroy();
    });
    ws.on('error', () => endSession(session));
    // Every channel opens with its port number, as the kubelet writes it.
    ports.forEach((port, i) => {
      ws.send(channelFrame(2 * i, portBytes(port)));
      ws.send(channelFrame(2 * i + 1, portBytes(port)));
    });
    const byChannel = new Map<number, net.Socket>();
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      const frame = isBinary ? data : Buffer.from(data);
      if (frame.length < 1) return;
      const tcp = byChannel.get(frame[0]);
      if (!tcp || tcp.destroyed) return;
      if (!tcp.write(frame.subarray(1))) {
        ws.pause();
        tcp.once('drain', () => ws.resume());
      }
    });
    ports.forEach((port, i) => {
      const registered = this.targets.get(key(target.namespace, target.pod, port));
      let done = false;
      const finish = () => {
        if (done) return;
        done = true;
        portDone();
      };
      const fail = (reason: string) => {
        if (ws.readyState === WebSocket.OPEN) {
          ws.send(channelFrame(2 * i + 1, Buffer.from(`error forwarding port ${port} to pod ${podLabel}, uid ${uid}: ${reason}`)));
        }
        finish();
      };
      if (!registered) {
        fail(`failed to connect to localhost:${port} inside the pod's network namespace: dial tcp4 127.0.0.1:${port}: connect: connection refused`);
        return;
      }
      const tcp = net.connect({ host: registered.host, port: registered.port });
      session.tcp.push(tcp);
      byChannel.set(2 * i, tcp);
      let connected = false;
      tcp.on('connect', () => (connected = true));
      tcp.on('data', (chunk: Buffer) => {
        if (ws.readyState !== WebSocket.OPEN) return;
        // ws calls back once the frame is handed to the socket: the pod side waits for that
        // when too much is queued toward a slow client.
        const full = ws.bufferedAmount > HIGH_WATER;
        if (full) tcp.pause();
        ws.send(channelFrame(2 * i, chunk), full ? () => tcp.resume() : undefined);
      });
      tcp.on('error', (err: NodeJS.ErrnoException) => {
        if (!connected) fail(`failed to connect to localhost:${port} inside the pod's network namespace: dial tcp4 127.0.0.1:${port}: connect: ${dialReason(err)}`);
        else finish();
      });
      tcp.on('close', finish);
    });
  }
}

function key(namespace: string, pod: string, port: number): string {
  return `${namespace}/${pod}:${port}`;
}

/** The `ports` query parameters (each may list several, comma-separated), checked as the kubelet does. */
function parsePorts(query: URLSearchParams): number[] {
  const values = query.getAll('ports');
  if (values.length === 0) throw badRequest('query parameter "ports" is required');
  const ports: number[] = [];
  for (const value of values) {
    if (value === '') throw badRequest('query parameter "ports" cannot be empty');
    for (const part of value.split(',')) {
      const port = /^\d{1,5}$/.test(part) ? Number(part) : NaN;
      if (!(port <= 65535)) throw badRequest(`unable to parse "${value}" as a port: strconv.ParseUint: parsing "${part}": invalid syntax`);
      if (port < 1) throw badRequest(`port "${value}" must be > 0`);
      ports.push(port);
    }
  }
  return ports;
}

function portBytes(port: number): Buffer {
  const b = Buffer.alloc(2);
  b.writeUInt16LE(port, 0);
  return b;
}

function channelFrame(channel: number, payload: Buffer): Buffer {
  return Buffer.concat([Buffer.from([channel]), payload]);
}

function dialReason(err: NodeJS.ErrnoException): string {
  if (err.code === 'ECONNREFUSED') return 'connection refused';
  if (err.code === 'EHOSTUNREACH') return 'no route to host';
  return err.message;
}

function endSession(session: Session): void {
  for (const t of session.tcp) t.destroy();
  if (session.ws.readyState === WebSocket.OPEN) session.ws.close(1000);
  else session.ws.terminate();
}

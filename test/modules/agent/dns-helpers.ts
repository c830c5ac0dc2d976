/** Real DNS sockets for the DNS proxy's tests: a scriptable upstream server and a client. */
import * as dgram from 'node:dgram';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import * as dnsPacket from 'dns-packet';
import type { Answer, DecodedPacket, Question } from 'dns-packet';

export interface UpstreamReply {
  answers?: Answer[];
  rcode?: number;
  /** Answer after this long. */
  delayMs?: number;
  /** Never answer. */
  drop?: boolean;
}

export interface TestUpstream {
  port: number;
  /** Every question received, with the protocol it came over. */
  received: Array<{ protocol: 'udp' | 'tcp'; name: string; type: string }>;
  stop(): Promise<void>;
}

/**
 * A DNS server on 127.0.0.1 (UDP and TCP, same port) answering with `reply`. Over UDP a
 * reply larger than the query allows (512 bytes without EDNS) goes out truncated (TC, no
 * answers), as a real server does.
 */
export async function startUpstream(reply: (q: Question, protocol: 'udp' | 'tcp') => UpstreamReply): Promise<TestUpstream> {
  const received: TestUpstream['received'] = [];
  const clients = new Set<net.Socket>();
  const respond = async (raw: Buffer, protocol: 'udp' | 'tcp'): Promise<Buffer | undefined> => {
    const query = dnsPacket.decode(raw);
    const question = query.questions![0];
    received.push({ protocol, name: question.name, type: question.type });
    const r = reply(question, protocol);
    if (r.drop) return undefined;
    if (r.delayMs) await new Promise((resolve) => setTimeout(resolve, r.delayMs));
    const build = (answers: Answer[], truncated: boolean) =>
      dnsPacket.encode({
        type: 'response',
        id: query.id,
        flags: dnsPacket.RECURSION_AVAILABLE | (truncated ? dnsPacket.TRUNCATED_RESPONSE : 0) | (r.rcode ?? 0),
        questions: query.questions,
        answers,
      });
    const full = build(r.answers ?? [], false);
    const limit = protocol === 'tcp' ? 65535 : Math.max(512, (query.additionals?.find((a) => a.type === 'OPT') as { udpPayloadSize?: number } | undefined)?.udpPayloadSize ?? 0);
    return full.length <= limit ? full : build([], true);
  };
  const makeUdp = () => {
    const socket = dgram.createSocket('udp4');
    socket.on('message', (msg, from) =>
      void respond(msg, 'udp').then((out) => {
        try {
          if (out) socket.send(out, from.port, from.address);
        } catch {
          // stopped while a delayed answer was pending
        }
      }),
    );
    return socket;
  };
  const tcp = net.createServer((socket) => {
    clients.add(socket);
    socket.on('close', () => clients.delete(socket));
    socket.on('error', () => undefined);
    let buffered = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      while (buffered.length >= 2 && buffered.length >= 2 + buffered.readUInt16BE(0)) {
        const message = buffered.subarray(2, 2 + buffered.readUInt16BE(0));
        buffered = buffered.subarray(2 + message.length);
        void respond(Buffer.from(message), 'tcp').then((out) => {
          if (!out || socket.destroyed) return;
          const length = Buffer.alloc(2);
          length.writeUInt16BE(out.length);
          socket.write(Buffer.concat([length, out]));
        });
      }
    });
  });
  const { port, udp } = await bindSamePort(tcp, makeUdp);
  return {
    port,
    received,
    stop: async () => {
      for (const c of clients) c.destroy();
      await new Promise<void>((resolve) => udp.close(() => resolve()));
      await new Promise<void>((resolve) => tcp.close(() => resolve()));
    },
  };
}

/**
 * A free port for TCP, then UDP on the same number. The number may be taken for UDP, so a
 * clash means another TCP port and another try (with a new UDP socket: a failed one is spent).
 */
async function bindSamePort(tcp: net.Server, makeUdp: () => dgram.Socket): Promise<{ port: number; udp: dgram.Socket }> {
  for (let attempt = 0; ; attempt++) {
    await new Promise<void>((resolve, reject) => {
      tcp.once('error', reject);
      tcp.listen(0, '127.0.0.1', () => {
        tcp.off('error', reject);
        resolve();
      });
    });
    const port = (tcp.address() as net.AddressInfo).port;
    const udp = makeUdp();
    const clash = await new Promise<Error | undefined>((resolve) => {
      udp.once('error', resolve);
      udp.bind(port, '127.0.0.1', () => {
        udp.off('error', resolve);
        resolve(undefined);
      });
    });
    if (!clash) return { port, udp };
    udp.close();
    await new Promise<void>((resolve) => tcp.close(() => resolve()));
    if ((clash as NodeJS.ErrnoException).code !== 'EADDRINUSE' || attempt >= 10) throw clash;
  }
}

/** A port with nothing listening on it (UDP and TCP) on 127.0.0.1. */
export async function deadPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface AskOptions {
  protocol?: 'udp' | 'tcp';
  /** EDNS UDP payload size to advertise (an OPT record); none by default. */
  udpSize?: number;
  host?: string;
  timeoutMs?: number;
}

/** One query to a DNS server; the decoded reply (with the raw size). */
export async function ask(port: number, name: string, type: string, o: AskOptions = {}): Promise<DecodedPacket & { rcode: string; size: number }> {
  const id = Math.floor(Math.random() * 65535);
  const query = dnsPacket.encode({
    type: 'query',
    id,
    flags: dnsPacket.RECURSION_DESIRED,
    questions: [{ type: type as Question['type'], name, class: 'IN' }],
    additionals: o.udpSize ? [{ type: 'OPT', name: '.', udpPayloadSize: o.udpSize, extendedRcode: 0, ednsVersion: 0, flags: 0, flag_do: false, options: [] }] : [],
  });
  const raw = await (o.protocol === 'tcp' ? askTcp : askUdp)(query, o.host ?? '127.0.0.1', port, o.timeoutMs ?? 5000);
  const reply = dnsPacket.decode(raw) as DecodedPacket & { rcode: string; size: number };
  if (reply.id !== id) throw new Error(`reply ID ${reply.id} is not the query's ${id}`);
  reply.size = raw.length;
  return reply;
}

/** Sends raw bytes over UDP; the raw reply, or undefined when none comes within `timeoutMs`. */
export function sendRawUdp(bytes: Buffer, port: number, timeoutMs = 1000): Promise<Buffer | undefined> {
  return askUdp(bytes, '127.0.0.1', port, timeoutMs).catch(() => undefined);
}

function askUdp(query: Buffer, host: string, port: number, timeoutMs: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const socket = dgram.createSocket(net.isIPv6(host) ? 'udp6' : 'udp4');
    const timer = setTimeout(() => {
      socket.close();
      reject(new Error(`no UDP reply from ${host}:${port} within ${timeoutMs} ms`));
    }, timeoutMs);
    socket.on('message', (msg) => {
      clearTimeout(timer);
      socket.close();
      resolve(msg);
    });
    socket.send(query, port, host);
  });
}

function askTcp(query: Buffer, host: string, port: number, timeoutMs: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host, port });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no TCP reply from ${host}:${port} within ${timeoutMs} ms`));
    }, timeoutMs);
    let buffered = Buffer.alloc(0);
    socket.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    socket.on('connect', () => {
      const length = Buffer.alloc(2);
      length.writeUInt16BE(query.length);
      socket.write(Buffer.concat([length, query]));
    });
    socket.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      if (buffered.length >= 2 && buffered.length >= 2 + buffered.readUInt16BE(0)) {
        clearTimeout(timer);
        socket.destroy();
        resolve(buffered.subarray(2, 2 + buffered.readUInt16BE(0)));
      }
    });
  });
}

/** A resolv.conf in a fresh temporary directory. */
export function resolvConf(lines: string[]): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-dns-'));
  const file = path.join(dir, 'resolv.conf');
  fs.writeFileSync(file, lines.join('\n') + '\n');
  return file;
}

/** The data of the answers of a type, sorted. */
export function dataOf(reply: DecodedPacket, type: string): string[] {
  return (reply.answers ?? []).filter((a) => a.type === type).map((a) => String((a as { data: unknown }).data)).sort();
}

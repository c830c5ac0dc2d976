/**
 * The agent's DNS proxy (DNS_PROXY_ADDR, UDP and TCP): answers mesh names from the daemon's
 * name table and forwards every other query to the host's resolvers (resolv.conf), one after
 * another or all at once (DNS_FORWARD_PARALLEL).
 */
import * as dgram from 'node:dgram';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as dnsPacket from 'dns-packet';
import type { DecodedPacket } from 'dns-packet';
import type { NameTable } from '../../envoy/name-table';
import { DEFAULT_DNS_PROXY_ADDR, DnsProxyAddress, parseDnsProxyAddress } from './address';
import { LookupTable } from './lookup-table';
import { fitReply, formatError, replyLimit, replyTo, Rcode } from './messages';
import { readResolvConf, Upstream } from './resolv-conf';
import { formatUpstream, UpstreamForwarder } from './upstream';

export type DnsLog = (level: 'debug' | 'info' | 'warn' | 'error', message: string) => void;

export interface DnsProxyOptions {
  /** DNS_PROXY_ADDR as written (`localhost:15053` when empty). */
  address?: string;
  /** DNS_FORWARD_PARALLEL. */
  forwardParallel?: boolean;
  /** Where the upstream resolvers and search domains are read; default /etc/resolv.conf. */
  resolvConfPath?: string;
  /**
   * The proxy's DNS domain (`<namespace>.svc.cluster.local`, the node ID's last part): the
   * search domain known names are expanded with when resolv.conf lists none.
   */
  proxyDomain?: string;
  /** How long one upstream has to answer; default 2 s (the incumbent's resolver client's). */
  upstreamTimeoutMs?: number;
  /**
   * Forward every query before the first name table arrives, instead of SERVFAIL (which makes
   * clients retry rather than cache a wrong NXDOMAIN). Default: when serving on port 53,
   * where the proxy is the host's only resolver.
   */
  respondBeforeSync?: boolean;
  log?: DnsLog;
}

/** What the DNS proxy did since it started. */
export interface DnsProxyStats {
  /** Queries received (UDP and TCP). */
  queries: number;
  /** Answered from the name table. */
  answeredFromTable: number;
  /** Sent upstream. */
  forwarded: number;
  /** Forwarded queries no upstream answered (the client got SERVFAIL). */
  upstreamFailures: number;
  /** Not DNS queries (FORMERR or dropped). */
  malformed: number;
}

const ROOT_RESOLV_CONF = '/var/lib/mesh/resolv.conf';
/** An idle TCP client is closed after this long. */
const TCP_IDLE_MS = 30_000;

export class DnsProxyServer {
  private table?: LookupTable;
  private readonly counters: DnsProxyStats = { queries: 0, answeredFromTable: 0, forwarded: 0, upstreamFailures: 0, malformed: 0 };
  private readonly udpSockets: dgram.Socket[] = [];
  private readonly tcpServers: net.Server[] = [];
  private readonly tcpClients = new Set<net.Socket>();
  private readonly log: DnsLog;
  private forwarder?: UpstreamForwarder;
  private searchDomains: string[] = [];
  private respondBeforeSync = false;

  constructor(private readonly options: DnsProxyOptions = {}) {
    this.log = options.log ?? (() => undefined);
  }

  /**
   * Reads resolv.conf, binds UDP and TCP on the address (port 0 picks one, the same for
   * both) and resolves with it. A bad DNS_PROXY_ADDR or unreadable resolv.conf is an error
   * naming it.
   */
  async start(): Promise<DnsProxyAddress> {
    let address = parseDnsProxyAddress(this.options.address || DEFAULT_DNS_PROXY_ADDR);
    const root = process.getuid?.() === 0;
    if (address.port === 53 && !root) {
      // Binding 53 needs root; the incumbent then serves on the default address instead.
      this.log('error', `DNS_PROXY_ADDR ${this.options.address}: port 53 needs root; serving on ${DEFAULT_DNS_PROXY_ADDR} instead`);
      address = parseDnsProxyAddress(DEFAULT_DNS_PROXY_ADDR);
    }
    const servingOn53 = address.port === 53;
    // On 53 the host's resolv.conf may name this proxy; the original is then kept aside.
    const resolvConfPath = this.options.resolvConfPath ?? (servingOn53 && fs.existsSync(ROOT_RESOLV_CONF) ? ROOT_RESOLV_CONF : '/etc/resolv.conf');
    const resolvConf = readResolvConf(resolvConfPath);
    this.searchDomains = resolvConf.search.length > 0 ? resolvConf.search : this.options.proxyDomain ? [this.options.proxyDomain] : [];
    this.respondBeforeSync = this.options.respondBeforeSync ?? servingOn53;

    const hosts = bindHosts(address.host, resolvConf.nameservers);
    const port = await this.bindAll(hosts, address.port);
    const upstreams = resolvConf.nameservers.filter((u) => !(u.port === port && (hosts.includes(u.host) || hosts.includes('0.0.0.0'))));
    if (upstreams.length < resolvConf.nameservers.length) this.log('warn', `${resolvConfPath} names this DNS proxy itself as a resolver; not forwarding there`);
    if (upstreams.length === 0) this.log('warn', `${resolvConfPath} names no other resolver: names outside the mesh will get SERVFAIL`);
    this.forwarder = new UpstreamForwarder({ upstreams, parallel: this.options.forwardParallel ?? false, timeoutMs: this.options.upstreamTimeoutMs ?? 2000 });
    this.log(
      'info',
      `DNS proxy listening on ${hosts.map((h) => formatUpstream({ host: h, port })).join(', ')} (UDP and TCP); upstream ${upstreams.map(formatUpstream).join(', ') || 'none'}` +
        `${this.options.forwardParallel ? ' in parallel' : ''}; search ${this.searchDomains.join(' ') || 'none'}`,
    );
    return { host: hosts[0], port };
  }

  async stop(): Promise<void> {
    for (const s of this.udpSockets.splice(0)) {
      await new Promise<void>((resolve) => {
        try {
          s.close(() => resolve());
        } catch {
          resolve(); // never bound, or already closed
        }
      });
    }
    for (const c of this.tcpClients) c.destroy();
    this.tcpClients.clear();
    await Promise.all(this.tcpServers.splice(0).map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  }

  /** Replaces the names answered locally (a name table from the daemon). */
  update(table: NameTable): void {
    this.table = new LookupTable(table, this.searchDomains);
    this.log('debug', `name table updated: ${this.table.size} names`);
  }

  /** Whether a name table has arrived (until then mesh names cannot be answered). */
  ready(): boolean {
    return this.table !== undefined;
  }

  get stats(): DnsProxyStats {
    return { ...this.counters };
  }

  /** Answers one query (raw bytes); undefined when there is nothing to send back. */
  async answer(raw: Buffer, protocol: 'udp' | 'tcp'): Promise<Buffer | undefined> {
    this.counters.queries += 1;
    let query: DecodedPacket;
    try {
      query = dnsPacket.decode(raw);
    } catch {
      this.counters.malformed += 1;
      return formatError(raw);
    }
    if (query.type !== 'query') {
      this.counters.malformed += 1;
      return undefined;
    }
    const limit = replyLimit(query, protocol);
    const question = query.questions?.[0];
    if (!question) return replyTo(query, Rcode.SERVFAIL, [], false);
    if (!this.table && !this.respondBeforeSync) {
      this.log('debug', `query for ${question.name} before the first name table: SERVFAIL`);
      return fitReply(replyTo(query, Rcode.SERVFAIL, [], false), limit);
    }
    const answers = this.table?.lookup(question.name, question.type);
    if (answers) {
      this.counters.answeredFromTable += 1;
      return fitReply(replyTo(query, Rcode.NOERROR, answers, true), limit);
    }
    this.counters.forwarded += 1;
    const result = this.forwarder ? await this.forwarder.forward(raw, protocol) : { failures: ['the DNS proxy is not started'] };
    if (!result.response) {
      this.counters.upstreamFailures += 1;
      this.log('warn', `no upstream answered ${question.type} ${question.name}: ${result.failures.join('; ') || 'no upstream resolvers'}`);
      return fitReply(replyTo(query, Rcode.SERVFAIL, [], false), limit);
    }
    return fitReply(result.response, limit);
  }

  /** Binds UDP and TCP on every host with one port; with port 0, retries when the picked port is taken. */
  private async bindAll(hosts: readonly string[], port: number): Promise<number> {
    for (let attempt = 0; ; attempt++) {
      try {
        let bound = port;
        for (const host of hosts) {
          bound = await this.bindUdp(host, bound);
          await this.bindTcp(host, bound);
        }
        return bound;
      } catch (e) {
        await this.stop();
        const err = e as NodeJS.ErrnoException;
        if (port !== 0 || err.code !== 'EADDRINUSE' || attempt >= 5) {
          throw new Error(`DNS proxy cannot listen on ${hosts.join(', ')} port ${port} (DNS_PROXY_ADDR): ${err.message}`);
        }
      }
    }
  }

  private bindUdp(host: string, port: number): Promise<number> {
    const socket = dgram.createSocket(net.isIPv6(host) ? 'udp6' : 'udp4');
    this.udpSockets.push(socket);
    socket.on('message', (msg, from) => {
      void this.answer(msg, 'udp').then((reply) => {
        if (reply) socket.send(reply, from.port, from.address, (e) => e && this.log('debug', `reply to ${from.address}:${from.port} failed: ${e.message}`));
      });
    });
    return new Promise((resolve, reject) => {
      socket.once('error', reject);
      socket.bind(port, host, () => {
        socket.off('error', reject);
        socket.on('error', (e) => this.log('warn', `DNS proxy UDP socket: ${e.message}`));
        resolve(socket.address().port);
      });
    });
  }

  private bindTcp(host: string, port: number): Promise<void> {
    const server = net.createServer((client) => this.serveTcp(client));
    this.tcpServers.push(server);
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen({ host, port, exclusive: true }, () => {
        server.off('error', reject);
        resolve();
      });
    });
  }

  /** DNS over TCP: 2-byte length-prefixed messages, several per connection, answered as they complete. */
  private serveTcp(client: net.Socket): void {
    this.tcpClients.add(client);
    client.setTimeout(TCP_IDLE_MS, () => client.end());
    client.on('close', () => this.tcpClients.delete(client));
    client.on('error', () => client.destroy());
    let buffered = Buffer.alloc(0);
    client.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      while (buffered.length >= 2 && buffered.length >= 2 + buffered.readUInt16BE(0)) {
        const message = buffered.subarray(2, 2 + buffered.readUInt16BE(0));
        buffered = buffered.subarray(2 + message.length);
        void this.answer(Buffer.from(message), 'tcp').then((reply) => {
          if (!reply || client.destroyed) return;
          const length = Buffer.alloc(2);
          length.writeUInt16BE(reply.length);
          client.write(Buffer.concat([length, reply]));
        });
      }
    });
  }
}

/**
 * `localhost` is 127.0.0.1, plus ::1 when an upstream is IPv6 (a dual-stack host's
 * resolver may use either, as the incumbent does); other hosts as written.
 */
function bindHosts(host: string, upstreams: readonly Upstream[]): string[] {
  if (host === '') return ['0.0.0.0'];
  if (host !== 'localhost') return [host];
  const v6 = upstreams.some((u) => net.isIPv6(u.host));
  const v4 = upstreams.some((u) => net.isIPv4(u.host));
  return v6 && !v4 ? ['::1'] : v6 ? ['127.0.0.1', '::1'] : ['127.0.0.1'];
}


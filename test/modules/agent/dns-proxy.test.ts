import { expect } from 'chai';
import * as dnsPacket from 'dns-packet';
import { DnsProxyServer, DnsProxyOptions, parseDnsProxyAddress, parseResolvConf } from '../../../src/modules/agent/dns';
import { NameTable } from '../../../src/modules/generators/nds/name-table';
import { ask, dataOf, deadPort, resolvConf, sendRawUdp, startUpstream, TestUpstream, UpstreamReply } from './dns-helpers';

const info = (ips: string[], alt: string[] = []) => ({ ips, registry: 'External', shortname: '', namespace: '', alt_hosts: alt });

const TABLE: NameTable = {
  table: {
    'api.example.com': info(['240.0.0.10', '2001:db8::10']),
    'echo.foo.svc.cluster.local': { ips: ['10.1.0.9'], registry: 'External', shortname: 'echo', namespace: 'foo', alt_hosts: ['echo.foo', 'echo.foo.svc', 'echo'] },
    '*.wild.example.com': info(['240.0.0.20']),
    'v4only.example.com': info(['240.0.0.30']),
    'many.foo.svc.cluster.local': info(Array.from({ length: 60 }, (_, i) => `10.5.0.${i + 1}`)),
  },
};

/** Outside names the test upstream knows. */
const OUTSIDE: Record<string, string> = { 'www.outside.test': '198.51.100.7' };
const answerOutside = (q: { name: string; type: string }): UpstreamReply =>
  OUTSIDE[q.name] && q.type === 'A' ? { answers: [{ type: 'A', name: q.name, ttl: 60, class: 'IN', data: OUTSIDE[q.name] }] } : { rcode: 3 };

describe('the agent\'s DNS proxy (DNS_PROXY_ADDR)', function () {
  this.timeout(20_000);
  const running: Array<{ stop(): Promise<void> }> = [];
  afterEach(async () => {
    for (const r of running.splice(0).reverse()) await r.stop();
  });

  async function upstream(reply: (q: dnsPacket.Question, protocol: 'udp' | 'tcp') => UpstreamReply = answerOutside): Promise<TestUpstream> {
    const u = await startUpstream(reply);
    running.push(u);
    return u;
  }

  async function proxy(upstreamLines: string[], options: Partial<DnsProxyOptions> = {}, table: NameTable | null = TABLE): Promise<{ server: DnsProxyServer; port: number }> {
    const server = new DnsProxyServer({ address: '127.0.0.1:0', resolvConfPath: resolvConf([...upstreamLines, 'search foo.svc.cluster.local svc.cluster.local cluster.local']), upstreamTimeoutMs: 500, ...options });
    const { port } = await server.start();
    running.push(server);
    if (table) server.update(table);
    return { server, port };
  }

  it('answers a ServiceEntry host with its address (UDP and TCP), authoritatively, without asking upstream', async () => {
    const up = await upstream();
    const { server, port } = await proxy([`nameserver 127.0.0.1:${up.port}`]);
    for (const protocol of ['udp', 'tcp'] as const) {
      const a = await ask(port, 'api.example.com', 'A', { protocol });
      expect(a.rcode).to.equal('NOERROR');
      expect(a.flag_aa).to.equal(true);
      expect(dataOf(a, 'A')).to.deep.equal(['240.0.0.10']);
      expect(a.answers![0]).to.include({ name: 'api.example.com', ttl: 30 });
      const aaaa = await ask(port, 'API.Example.com.', 'AAAA', { protocol });
      expect(dataOf(aaaa, 'AAAA')).to.deep.equal(['2001:db8::10']);
    }
    expect(up.received).to.deep.equal([]);
    expect(server.stats).to.deep.include({ queries: 4, answeredFromTable: 4, forwarded: 0 });
  });

  it('answers short names in the proxy\'s namespace, and expands known names with the first search domain', async () => {
    const up = await upstream();
    const { port } = await proxy([`nameserver 127.0.0.1:${up.port}`]);
    for (const name of ['echo', 'echo.foo', 'echo.foo.svc', 'echo.foo.svc.cluster.local']) {
      expect(dataOf(await ask(port, name, 'A'), 'A'), name).to.deep.equal(['10.1.0.9']);
    }
    // What a pod's stub resolver asks first for `api.example.com`: a CNAME to the name, then its address.
    const expanded = await ask(port, 'api.example.com.foo.svc.cluster.local', 'A');
    expect(expanded.answers!.map((a) => [a.type, a.name, (a as { data: string }).data])).to.deep.equal([
      ['CNAME', 'api.example.com.foo.svc.cluster.local', 'api.example.com'],
      ['A', 'api.example.com', '240.0.0.10'],
    ]);
    expect(dataOf(await ask(port, 'x.y.wild.example.com', 'A'), 'A')).to.deep.equal(['240.0.0.20']);
    expect(up.received).to.deep.equal([]);
  });

  it('gives NOERROR without answers for a mesh name\'s other types, never NXDOMAIN and never upstream', async () => {
    const up = await upstream();
    const { port } = await proxy([`nameserver 127.0.0.1:${up.port}`]);
    for (const [name, type] of [['v4only.example.com', 'AAAA'], ['api.example.com', 'MX'], ['echo', 'TXT']]) {
      const reply = await ask(port, name, type);
      expect(reply.rcode, `${type} ${name}`).to.equal('NOERROR');
      expect(reply.answers, `${type} ${name}`).to.deep.equal([]);
    }
    expect(up.received).to.deep.equal([]);
  });

  it('forwards an outside name to the resolv.conf upstream and relays its answer, over the client\'s protocol', async () => {
    const up = await upstream();
    const { server, port } = await proxy([`nameserver 127.0.0.1:${up.port}`]);
    for (const protocol of ['udp', 'tcp'] as const) {
      const reply = await ask(port, 'www.outside.test', 'A', { protocol });
      expect(reply.rcode).to.equal('NOERROR');
      expect(reply.flag_aa).to.equal(false);
      expect(dataOf(reply, 'A')).to.deep.equal(['198.51.100.7']);
    }
    expect((await ask(port, 'nowhere.outside.test', 'A')).rcode).to.equal('NXDOMAIN');
    expect(up.received).to.deep.equal([
      { protocol: 'udp', name: 'www.outside.test', type: 'A' },
      { protocol: 'tcp', name: 'www.outside.test', type: 'A' },
      { protocol: 'udp', name: 'nowhere.outside.test', type: 'A' },
    ]);
    expect(server.stats).to.deep.include({ queries: 3, forwarded: 3, upstreamFailures: 0 });
  });

  it('answers SERVFAIL when no upstream answers (nothing listening, or silent past the timeout)', async () => {
    const silent = await upstream(() => ({ drop: true }));
    const { server, port } = await proxy([`nameserver 127.0.0.1:${await deadPort()}`, `nameserver 127.0.0.1:${silent.port}`]);
    const started = Date.now();
    expect((await ask(port, 'www.outside.test', 'A')).rcode).to.equal('SERVFAIL');
    expect(Date.now() - started).to.be.within(450, 3000); // the silent one's 500 ms timeout
    expect((await ask(port, 'www.outside.test', 'A', { protocol: 'tcp' })).rcode).to.equal('SERVFAIL');
    expect(silent.received.map((r) => r.protocol)).to.deep.equal(['udp', 'tcp']);
    expect(server.stats).to.deep.include({ forwarded: 2, upstreamFailures: 2 });
  });

  it('tries the upstreams one after another: a dead first one is skipped', async () => {
    const up = await upstream();
    const { port } = await proxy([`nameserver 127.0.0.1:${await deadPort()}`, `nameserver 127.0.0.1:${up.port}`]);
    expect(dataOf(await ask(port, 'www.outside.test', 'A'), 'A')).to.deep.equal(['198.51.100.7']);
  });

  it('with DNS_FORWARD_PARALLEL asks every upstream at once and takes the first answer', async () => {
    const answer = (ip: string, delayMs: number) => (q: dnsPacket.Question): UpstreamReply => ({ delayMs, answers: [{ type: 'A', name: q.name, ttl: 60, class: 'IN', data: ip }] });
    const slow = await upstream(answer('192.0.2.1', 1500));
    const fast = await upstream(answer('192.0.2.2', 0));
    const lines = [`nameserver 127.0.0.1:${slow.port}`, `nameserver 127.0.0.1:${fast.port}`];

    const parallel = await proxy(lines, { forwardParallel: true, upstreamTimeoutMs: 3000 });
    let started = Date.now();
    expect(dataOf(await ask(parallel.port, 'www.outside.test', 'A'), 'A')).to.deep.equal(['192.0.2.2']);
    expect(Date.now() - started).to.be.below(1200);
    expect(slow.received).to.have.length(1);
    expect(fast.received).to.have.length(1);

    // One after another, the slow first upstream's answer is the one.
    const sequential = await proxy(lines, { forwardParallel: false, upstreamTimeoutMs: 3000 });
    started = Date.now();
    expect(dataOf(await ask(sequential.port, 'www.outside.test', 'A'), 'A')).to.deep.equal(['192.0.2.1']);
    expect(Date.now() - started).to.be.at.least(1400);
    expect(fast.received).to.have.length(1);

    // In parallel, one dead upstream does not fail the query; all failing does.
    const oneDead = await proxy([`nameserver 127.0.0.1:${await deadPort()}`, `nameserver 127.0.0.1:${fast.port}`], { forwardParallel: true });
    expect(dataOf(await ask(oneDead.port, 'www.outside.test', 'A'), 'A')).to.deep.equal(['192.0.2.2']);
    const allDead = await proxy([`nameserver 127.0.0.1:${await deadPort()}`, `nameserver 127.0.0.1:${await deadPort()}`], { forwardParallel: true });
    expect((await ask(allDead.port, 'www.outside.test', 'A')).rcode).to.equal('SERVFAIL');
  });

  it('truncates a large answer over UDP (TC, within 512 bytes or the EDNS size) and gives it whole over TCP', async () => {
    const up = await upstream((q) => ({ answers: Array.from({ length: 80 }, (_, i) => ({ type: 'A' as const, name: q.name, ttl: 60, class: 'IN' as const, data: `203.0.113.${i + 1}` })) }));
    const { port } = await proxy([`nameserver 127.0.0.1:${up.port}`]);

    const small = await ask(port, 'many.foo.svc.cluster.local', 'A');
    expect(small.flag_tc).to.equal(true);
    expect(small.size).to.be.at.most(512);
    expect(small.answers!.length).to.be.within(1, 59);
    const edns = await ask(port, 'many.foo.svc.cluster.local', 'A', { udpSize: 4096 });
    expect(edns.flag_tc).to.equal(false);
    expect(edns.answers).to.have.length(60);
    expect(edns.additionals!.map((a) => a.type)).to.deep.equal(['OPT']);
    const whole = await ask(port, 'many.foo.svc.cluster.local', 'A', { protocol: 'tcp' });
    expect(whole.flag_tc).to.equal(false);
    expect(dataOf(whole, 'A')).to.have.members(TABLE.table['many.foo.svc.cluster.local'].ips);

    // Forwarded: the upstream's truncated UDP answer is relayed; over TCP the client gets it all.
    const relayed = await ask(port, 'big.outside.test', 'A');
    expect(relayed.flag_tc).to.equal(true);
    expect((await ask(port, 'big.outside.test', 'A', { protocol: 'tcp' })).answers).to.have.length(80);
    expect(up.received.map((r) => r.protocol)).to.deep.equal(['udp', 'tcp']);
  });

  it('answers SERVFAIL before the first name table, unless told to forward before it', async () => {
    const up = await upstream();
    const waiting = await proxy([`nameserver 127.0.0.1:${up.port}`], {}, null);
    expect(waiting.server.ready()).to.equal(false);
    expect((await ask(waiting.port, 'www.outside.test', 'A')).rcode).to.equal('SERVFAIL');
    expect(up.received).to.deep.equal([]);
    waiting.server.update({ table: {} });
    expect(waiting.server.ready()).to.equal(true);
    expect(dataOf(await ask(waiting.port, 'www.outside.test', 'A'), 'A')).to.deep.equal(['198.51.100.7']);

    const eager = await proxy([`nameserver 127.0.0.1:${up.port}`], { respondBeforeSync: true }, null);
    expect(dataOf(await ask(eager.port, 'www.outside.test', 'A'), 'A')).to.deep.equal(['198.51.100.7']);
  });

  it('follows table updates: a name that left the table is forwarded', async () => {
    const up = await upstream();
    const { server, port } = await proxy([`nameserver 127.0.0.1:${up.port}`]);
    expect(dataOf(await ask(port, 'api.example.com', 'A'), 'A')).to.deep.equal(['240.0.0.10']);
    server.update({ table: { 'api.example.com': info(['240.0.0.11']) } });
    expect(dataOf(await ask(port, 'api.example.com', 'A'), 'A')).to.deep.equal(['240.0.0.11']);
    server.update({ table: {} });
    expect((await ask(port, 'api.example.com', 'A')).rcode).to.equal('NXDOMAIN');
    expect(up.received.map((r) => r.name)).to.deep.equal(['api.example.com']);
  });

  it('answers FORMERR to bytes that are not DNS, and keeps serving', async () => {
    const up = await upstream();
    const { server, port } = await proxy([`nameserver 127.0.0.1:${up.port}`]);
    const garbage = Buffer.from('12345678901234567890', 'latin1');
    const reply = await sendRawUdp(garbage, port);
    expect(reply, 'a reply').not.to.equal(undefined);
    const decoded = dnsPacket.decode(reply!);
    expect(decoded.id).to.equal(garbage.readUInt16BE(0));
    expect((decoded as { rcode?: string }).rcode).to.equal('FORMERR');
    expect(dataOf(await ask(port, 'api.example.com', 'A'), 'A')).to.deep.equal(['240.0.0.10']);
    expect(server.stats.malformed).to.equal(1);
  });

  it('uses the proxy\'s domain as search domain when resolv.conf has none', async () => {
    const up = await upstream();
    const server = new DnsProxyServer({ address: '127.0.0.1:0', resolvConfPath: resolvConf([`nameserver 127.0.0.1:${up.port}`]), proxyDomain: 'bar.svc.cluster.local' });
    const { port } = await server.start();
    running.push(server);
    server.update(TABLE);
    expect(dataOf(await ask(port, 'api.example.com.bar.svc.cluster.local', 'A'), 'A')).to.deep.equal(['240.0.0.10']);
  });

  it('says what is wrong with DNS_PROXY_ADDR and resolv.conf', async () => {
    expect(parseDnsProxyAddress('localhost:15053')).to.deep.equal({ host: 'localhost', port: 15053 });
    expect(parseDnsProxyAddress('[::1]:53')).to.deep.equal({ host: '::1', port: 53 });
    expect(parseDnsProxyAddress(':15053')).to.deep.equal({ host: '', port: 15053 });
    expect(() => parseDnsProxyAddress('localhost')).to.throw(/^DNS_PROXY_ADDR="localhost": no port/);
    expect(() => parseDnsProxyAddress('localhost:dns')).to.throw(/DNS_PROXY_ADDR="localhost:dns": port "dns" is not a number/);
    expect(() => parseDnsProxyAddress('::1:53')).to.throw(/brackets/);
    expect(() => parseDnsProxyAddress('127.0.0.1:70000')).to.throw(/above 65535/);
    await new DnsProxyServer({ address: 'nowhere' }).start().then(
      () => expect.fail('started'),
      (e: Error) => expect(e.message).to.match(/DNS_PROXY_ADDR="nowhere"/),
    );
    await new DnsProxyServer({ address: '127.0.0.1:0', resolvConfPath: '/nonexistent/resolv.conf' }).start().then(
      () => expect.fail('started'),
      (e: Error) => expect(e.message).to.match(/\/nonexistent\/resolv.conf/),
    );
    expect(parseResolvConf('# comment\nnameserver 10.0.0.1\nnameserver ::1\nnameserver 127.0.0.1:5353\ndomain a.b\nsearch ns.svc.cluster.local. svc.cluster.local\noptions ndots:5\n')).to.deep.equal({
      nameservers: [
        { host: '10.0.0.1', port: 53 },
        { host: '::1', port: 53 },
        { host: '127.0.0.1', port: 5353 },
      ],
      search: ['ns.svc.cluster.local', 'svc.cluster.local'],
    });
    expect(() => parseResolvConf('nameserver dns.example.com\n', '/etc/resolv.conf')).to.throw('/etc/resolv.conf:1: nameserver dns.example.com is not an IP address');
  });
});

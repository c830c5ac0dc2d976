import { expect } from 'chai';
import { GrpcGenerator } from '../../../src/modules/generators/grpc/generator';
import { NameTableGenerator, withNameTable } from '../../../src/modules/generators/nds';
import { NameTable } from '../../../src/modules/generators/nds/name-table';
import { ChangeSet } from '../../../src/modules/model/generator';
import { Proxy, PushContext } from '../../../src/modules/model';
import { planPush } from '../../../src/modules/xds/push-plan';
import { decodeMessage } from '../../../src/modules/envoy/protos';
import { TypeUrl } from '../../../src/modules/envoy/type-urls';
import { proxyOf, pushOf, serviceEntryYaml, workloadServiceYaml } from '../../helpers/push';

const CONFIG = [
  // A VIP (and a CIDR, which is no answer).
  serviceEntryYaml('egress', 'api', 'api.example.com', 'DNS', '{ number: 443, name: tls, protocol: TLS }', '\n  addresses: [240.0.0.10, "2001:db8::10", 10.20.0.0/16]'),
  // Only a CIDR: not in the table.
  serviceEntryYaml('egress', 'range', 'range.example.com', 'NONE', '{ number: 80, name: http, protocol: HTTP }', '\n  addresses: [10.30.0.0/16]'),
  // DNS resolution without a VIP: left to the real DNS.
  serviceEntryYaml('egress', 'plain', 'plain.example.com', 'DNS', '{ number: 80, name: http, protocol: HTTP }'),
  // Headless (NONE) with endpoints from WorkloadEntries; one on another network.
  serviceEntryYaml('foo', 'db', 'db.foo.svc.cluster.local', 'NONE', '{ number: 5432, name: tcp, protocol: TCP }', '\n  workloadSelector: { labels: { app: db } }'),
  `
---
apiVersion: networking.mesh.io/v1
kind: WorkloadEntry
metadata: { name: db-0, namespace: foo }
spec: { address: 10.1.0.1, labels: { app: db } }
---
apiVersion: networking.mesh.io/v1
kind: WorkloadEntry
metadata: { name: db-1, namespace: foo }
spec: { address: 10.1.0.2, labels: { app: db }, network: west }
`,
  // Wildcard host with a VIP; a service exported to its own namespace only.
  serviceEntryYaml('egress', 'wild', '"*.wild.example.com"', 'NONE', '{ number: 80, name: http, protocol: HTTP }', '\n  addresses: [240.0.0.20]'),
  serviceEntryYaml('bar', 'private', 'private.bar.svc.cluster.local', 'STATIC', '{ number: 80, name: http, protocol: HTTP }', '\n  exportTo: ["."]\n  endpoints: [{ address: 10.2.0.1 }]'),
  '---\n' + workloadServiceYaml({ namespace: 'foo', name: 'echo', address: '10.1.0.9', ports: ['{ number: 8000, name: http, protocol: HTTP }'] }),
].join('\n');

const push = pushOf(CONFIG);
const generator = new NameTableGenerator();
const dnsProxy = (namespace: string, metadata: Record<string, string> = { DNS_CAPTURE: 'true' }) => proxyOf('10.9.0.1', namespace, {}, metadata);

function tableFor(proxy: Proxy, p: PushContext = push, names?: string[]): NameTable['table'] | undefined {
  const resources = generator.generate({ proxy, push: p, typeUrl: TypeUrl.NameTable, names });
  if (resources.length === 0) return undefined;
  expect(resources.map((r) => r.name)).to.deep.equal(['']);
  return (decodeMessage(TypeUrl.NameTable, resources[0].body) as unknown as NameTable).table;
}

describe('NDS: the name table the daemon sends the agent', () => {
  it('lists a VIP service with its IPv4 and IPv6 virtual IPs, leaving CIDRs out', () => {
    const table = tableFor(dnsProxy('foo'))!;
    expect(table['api.example.com'].ips).to.deep.equal(['240.0.0.10', '2001:db8::10']);
    expect(table['api.example.com'].registry).to.equal('External');
    expect(table).not.to.have.property('range.example.com');
    expect(table['*.wild.example.com'].ips).to.deep.equal(['240.0.0.20']);
  });

  it('answers a headless or STATIC service without VIP with its endpoint IPs on the proxy\'s network; a DNS one not at all', () => {
    const table = tableFor(dnsProxy('foo'))!;
    expect(table['echo.foo.svc.cluster.local'].ips).to.deep.equal(['10.1.0.9']);
    expect([...table['db.foo.svc.cluster.local'].ips].sort()).to.deep.equal(['10.1.0.1', '10.1.0.2']);
    const east = tableFor(dnsProxy('foo', { DNS_CAPTURE: 'true', NETWORK: 'east' }))!;
    expect(east['db.foo.svc.cluster.local'].ips).to.deep.equal(['10.1.0.1']);
    expect(table).not.to.have.property('plain.example.com');
  });

  it('gives cluster-domain hosts their short names; the bare name only in the proxy\'s own namespace', () => {
    const own = tableFor(dnsProxy('foo'))!['echo.foo.svc.cluster.local'];
    expect(own).to.include({ shortname: 'echo', namespace: 'foo' });
    expect(own.alt_hosts).to.deep.equal(['echo.foo', 'echo.foo.svc', 'echo']);
    const other = tableFor(dnsProxy('bar'))!['echo.foo.svc.cluster.local'];
    expect(other.alt_hosts).to.deep.equal(['echo.foo', 'echo.foo.svc']);
    expect(tableFor(dnsProxy('foo'))!['api.example.com'].alt_hosts ?? []).to.deep.equal([]);
  });

  it('lists only what the proxy can see (exportTo, Sidecar egress)', () => {
    expect(tableFor(dnsProxy('foo'))).not.to.have.property('private.bar.svc.cluster.local');
    expect(tableFor(dnsProxy('bar'))!['private.bar.svc.cluster.local'].ips).to.deep.equal(['10.2.0.1']);
    const scoped = pushOf(
      CONFIG +
        `
---
apiVersion: networking.mesh.io/v1
kind: Sidecar
metadata: { name: default, namespace: foo }
spec: { egress: [{ hosts: ["./*"] }] }
`,
    );
    expect(Object.keys(tableFor(dnsProxy('foo'), scoped)!).sort()).to.deep.equal(['db.foo.svc.cluster.local', 'echo.foo.svc.cluster.local']);
  });

  it('is sent only to proxies whose agent runs the DNS proxy (DNS_CAPTURE or ENABLE_DNS_SERVER)', () => {
    expect(tableFor(dnsProxy('foo', {}))).to.equal(undefined);
    expect(tableFor(dnsProxy('foo', { DNS_CAPTURE: 'false' }))).to.equal(undefined);
    expect(tableFor(dnsProxy('foo', { ENABLE_DNS_SERVER: 'true' }))).to.have.property('api.example.com');
    expect(tableFor(dnsProxy('foo'), push, ['other-name'])).to.equal(undefined);
    expect(tableFor(dnsProxy('foo'), push, [''])).to.have.property('api.example.com');
  });

  it('is served next to any other generator (here proxyless gRPC), which keeps its own types', () => {
    const wrapped = withNameTable(new GrpcGenerator(), generator);
    const proxy = proxyOf('10.9.0.1', 'foo', {}, { GENERATOR: 'grpc', DNS_CAPTURE: 'true' });
    expect(wrapped.generate({ proxy, push, typeUrl: TypeUrl.NameTable, names: undefined }).map((r) => r.name)).to.deep.equal(['']);
    expect(wrapped.generate({ proxy, push, typeUrl: TypeUrl.Listener, names: ['echo.foo.svc.cluster.local:8000'] }).map((r) => r.name)).to.deep.equal([
      'echo.foo.svc.cluster.local:8000',
    ]);
  });

  describe('push plan', () => {
    const change = (c: Partial<ChangeSet>): ChangeSet => ({ full: false, services: new Set(), endpoints: new Set(), configs: new Set(), workloadAddresses: new Set(), ...c });
    const withDns = dnsProxy('foo');
    const withoutDns = dnsProxy('foo', {});

    it('a full push includes the table only for DNS proxies', () => {
      expect(planPush(change({ full: true }), withDns, push, undefined).get(TypeUrl.NameTable)).to.equal('all');
      expect(planPush(change({ full: true }), withoutDns, push, undefined).has(TypeUrl.NameTable)).to.equal(false);
    });

    it('a service change or a Sidecar change pushes the table', () => {
      expect(planPush(change({ services: new Set(['api.example.com']), configs: new Set(['ServiceEntry/egress/api']) }), withDns, push, undefined).get(TypeUrl.NameTable)).to.equal('all');
      expect(planPush(change({ configs: new Set(['Sidecar/foo/default']) }), withDns, push, undefined).get(TypeUrl.NameTable)).to.equal('all');
      expect(planPush(change({ services: new Set(['api.example.com']) }), withoutDns, push, undefined).has(TypeUrl.NameTable)).to.equal(false);
    });

    it('an endpoint change pushes it only for services answered with their endpoints', () => {
      const moved = (host: string) => planPush(change({ endpoints: new Set([host]), configs: new Set(['WorkloadEntry/foo/w']) }), withDns, push, new Set());
      expect(moved('db.foo.svc.cluster.local').get(TypeUrl.NameTable)).to.equal('all');
      expect(moved('api.example.com').has(TypeUrl.NameTable)).to.equal(false);
      expect(planPush(change({ configs: new Set(['VirtualService/foo/v']) }), withDns, push, undefined).has(TypeUrl.NameTable)).to.equal(false);
    });
  });
});

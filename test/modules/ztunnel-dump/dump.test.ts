import { expect } from 'chai';
import {
  certificatesTable,
  connectionsTable,
  parseZtunnelDump,
  servicesTable,
  workloadsTable,
  ztunnelLogDirectives,
  ztunnelLogRequest,
} from '../../../src/modules/ztunnel-dump';

const parse = (data: unknown) => parseZtunnelDump(Buffer.from(JSON.stringify(data)), 'dump.json');
const rows = (table: string) => table.trimEnd().split('\n').slice(1);

describe('ztunnel-dump', () => {
  describe('reading a dump', () => {
    const wrongTypes: [unknown, string][] = [
      [{ workloads: 'x' }, 'workloads is a string ("x"), expected an object or a list'],
      [{ workloads: [{ workloadIps: '10.0.0.1' }] }, 'workloads[0].workloadIps is a string ("10.0.0.1"), expected a list'],
      [{ workloads: [{ waypoint: { destination: 5 } }] }, 'workloads[0].waypoint.destination is a number (5), expected a string'],
      [{ workloads: { 'net 1/10.0.0.1': [] } }, 'workloads["net 1/10.0.0.1"] is a list, expected an object'],
      [{ services: [{ vips: [true] }] }, 'services[0].vips[0] is a boolean (true), expected a string'],
      [{ services: [{ endpoints: { e1: { workloadUid: 1 } } }] }, 'services[0].endpoints.e1.workloadUid is a number (1), expected a string'],
      [{ services: [{ endpoints: ['e1'] }] }, 'services[0].endpoints[0] is a string ("e1"), expected an object'],
      [{ policies: { p: { scope: {} } } }, 'policies.p.scope is an object, expected a string'],
      [{ certificates: [{ state: 1 }] }, 'certificates[0].state is a number (1), expected a string'],
      [{ certificates: [{ certChain: [null] }] }, 'certificates[0].certChain[0] is null, expected an object'],
      [{ workloadState: { u: { info: [] } } }, 'workloadState.u.info is a list, expected an object'],
      [{ workloadState: { u: { connections: { outbound: [{ src: 80 }] } } } }, 'workloadState.u.connections.outbound[0].src is a number (80), expected a string'],
      [{ workloadState: 'up' }, 'workloadState is a string ("up"), expected an object'],
      ['a string', 'the dump is a string ("a string"), expected an object with "workloads", "services", "policies" and "certificates": is it a ztunnel /config_dump?'],
      [null, 'the dump is null, expected an object with "workloads", "services", "policies" and "certificates": is it a ztunnel /config_dump?'],
    ];
    for (const [data, message] of wrongTypes) {
      it(`names the field: ${message}`, () => {
        expect(() => parse(data)).to.throw(`dump.json: ${message}`);
      });
    }

    it('reads null and missing fields as empty, as the reference does', () => {
      const dump = parse({ workloads: [{ name: 'a', workloadIps: null, waypoint: null, node: null }], services: null, certificates: [{ identity: 'i', certChain: null }] });
      expect(dump.workloads[0]).to.include({ name: 'a', node: '', waypoint: undefined });
      expect(dump.workloads[0].workloadIps).to.deep.equal([]);
      expect(dump.services).to.deep.equal([]);
      expect(dump.certificates[0].certChain).to.deep.equal([]);
    });

    it('takes collections as objects or lists, and top-level names in any letter case (Go decoding)', () => {
      const dump = parse({ Workloads: [{ name: 'a' }], workloadstate: { u: { info: { name: 'a', namespace: 'ns' } } }, POLICIES: { x: { name: 'p' } } });
      expect(dump.workloads.map((w) => w.name)).to.deep.equal(['a']);
      expect(dump.workloadStates.map((s) => s.name)).to.deep.equal(['a']);
      expect(dump.policies.map((p) => p.name)).to.deep.equal(['p']);
    });

    it('refuses bytes over the limit and text that is not JSON', () => {
      expect(() => parseZtunnelDump(Buffer.from('{}  '), 'the config dump of ztunnel z.ns', 3)).to.throw('the config dump of ztunnel z.ns is 4 bytes, more than the limit of 3');
      expect(() => parseZtunnelDump(Buffer.from('{"workloads": '), 'f.json')).to.throw(/^f\.json is not valid JSON: /);
    });
  });

  describe('tables', () => {
    it('certificates in the legacy form end the chain with the root; unparsable serials and dates as the reference shows them', () => {
      const cert = (serialNumber: string, validFrom: string, expirationTime: string) => ({ pem: '', serialNumber, validFrom, expirationTime });
      const dump = parse({
        certificates: [
          { identity: 'spiffe://td/ns/a/sa/one', state: 'Available', certChain: [cert('255', '2020-01-01T00:00:00Z', '2030-01-01T00:00:00Z'), cert('16', '2020-01-01T00:00:00Z', '2030-01-01T00:00:00Z'), cert('1', '2020-01-01T00:00:00Z', '2040-01-01T00:00:00Z')] },
          { identity: 'spiffe://td/ns/a/sa/two', state: 'Available', certChain: [cert('0x1f', 'yesterday', '2030-01-01T00:00:00Z')] },
          { identity: 'spiffe://td/ns/a/sa/three', state: 'Available', certChain: [cert('', '', '')], rootCerts: [cert('7', '2020-01-01T00:00:00.5+02:00', '2030-01-01T00:00:00Z')] },
        ],
      });
      const now = Date.parse('2025-06-01T00:00:00Z');
      expect(rows(certificatesTable(dump, now)).map((r) => r.split(/\s{5,}/))).to.deep.equal([
        ['spiffe://td/ns/a/sa/one', 'Leaf', 'Available', 'true', 'ff', '2030-01-01T00:00:00Z', '2020-01-01T00:00:00Z'],
        ['spiffe://td/ns/a/sa/one', 'Intermediate', 'Available', 'true', '10', '2030-01-01T00:00:00Z', '2020-01-01T00:00:00Z'],
        ['spiffe://td/ns/a/sa/one', 'Root', 'Available', 'true', '1', '2040-01-01T00:00:00Z', '2020-01-01T00:00:00Z'],
        ['spiffe://td/ns/a/sa/two', 'Leaf', 'Available', 'false', '<nil>', '2030-01-01T00:00:00Z', 'yesterday'],
        ['spiffe://td/ns/a/sa/three', 'Leaf', 'Available', 'false', '<nil>', 'NA', 'NA'],
        ['spiffe://td/ns/a/sa/three', 'Root', 'Available', 'true', '7', '2030-01-01T00:00:00Z', '2020-01-01T00:00:00.5+02:00'],
      ]);
      expect(rows(certificatesTable(dump, Date.parse('2035-01-01T00:00:00Z')))[0]).to.include('false');
    });

    it('names waypoints by VIP or by namespace/hostname; NA when no service matches', () => {
      const dump = parse({
        services: { '/10.96.0.5': { name: 'wp', namespace: 'ns', hostname: 'wp.ns.svc.cluster.local', vips: ['/10.96.0.5'] } },
        workloads: [
          { name: 'a', namespace: 'ns', node: 'n1', workloadIps: ['10.0.0.1'], waypoint: { destination: '/10.96.0.5' } },
          { name: 'b', namespace: 'ns', node: 'n1', workloadIps: ['10.0.0.2'], waypoint: { destination: 'ns/wp.ns.svc.cluster.local' } },
          { name: 'c', namespace: 'ns', node: 'n1', workloadIps: ['10.0.0.3'], waypoint: { destination: 'other/10.96.0.5' } },
          { name: 'd', namespace: 'ns', node: 'n1', workloadIps: ['10.0.0.4'] },
        ],
      });
      expect(rows(workloadsTable(dump)).map((r) => r.split(/\s+/)[4])).to.deep.equal(['wp', 'wp', 'NA', 'None']);
    });

    it('counts an endpoint healthy only when its workload is known and Healthy; a VIP without a network shows empty', () => {
      const dump = parse({
        workloads: [
          { uid: 'u1', status: 'Healthy' },
          { uid: 'u2', status: 'Unhealthy' },
        ],
        services: [{ name: 's', namespace: 'n', vips: ['10.96.0.9', 'net/10.96.0.10'], endpoints: [{ workloadUid: 'u1' }, { workloadUid: 'u2' }, { workloadUid: 'u3' }] }],
      });
      expect(rows(servicesTable(dump))).to.deep.equal(['n         s            ,10.96.0.10 None     1/3']);
    });

    it('names connection addresses (IPv6 in brackets too), leaves other text as it is, and shows everything raw with --raw', () => {
      const dump = parse({
        workloads: [{ name: 'v6', namespace: 'n', workloadIps: ['fd00::1'] }, { name: 'v4', namespace: 'n', workloadIps: ['10.0.0.1'] }],
        services: [{ hostname: 'svc.n.svc.cluster.local', vips: ['/10.96.0.1'] }],
        workloadState: {
          u: {
            info: { name: 'v4', namespace: 'n' },
            connections: {
              inbound: [{ src: '[fd00::1]:4000', actualDst: '10.0.0.1:80', originalDst: 'svc.n.svc.cluster.local', protocol: 'TCP' }],
              outbound: [{ src: '10.0.0.1:5000', actualDst: 'fd00::1:80', originalDst: '10.96.0.1:80', protocol: 'HBONE' }],
            },
          },
        },
      });
      expect(rows(connectionsTable(dump)).map((r) => r.split(/\s+/))).to.deep.equal([
        ['v4.n', 'Inbound', 'v4.n:80', 'v6.n:4000', 'svc.n.svc.cluster.local', 'TCP'],
        ['v4.n', 'Outbound', 'v4.n:5000', 'fd00::1:80', 'svc.n.svc.cluster.local:80', 'HBONE'],
      ]);
      expect(rows(connectionsTable(dump, { raw: true, direction: 'inbound' })).map((r) => r.split(/\s+/))).to.deep.equal([
        ['v4.n', 'Inbound', '10.0.0.1:80', '[fd00::1]:4000', 'svc.n.svc.cluster.local', 'TCP'],
      ]);
    });
  });

  describe('log levels', () => {
    it('turns --level into ztunnel filter directives', () => {
      expect(ztunnelLogDirectives('debug')).to.equal('debug');
      expect(ztunnelLogDirectives('warning')).to.equal('warn');
      expect(ztunnelLogDirectives('access:debug,critical')).to.equal('access=debug,error');
      expect(ztunnelLogDirectives('ztunnel::proxy:trace,hickory_server::server=off')).to.equal('ztunnel::proxy=trace,hickory_server::server=off');
      // As proxy-config log reads --level: any letter case, blanks and empty parts ignored, level:<l> for every logger.
      expect(ztunnelLogDirectives(' Access : DEBUG ,, level:Warning,')).to.equal('Access=debug,warn');
      expect(ztunnelLogDirectives('access:debug,level=trace')).to.equal('access=debug,trace');
    });

    it('refuses unknown levels and logger names with one line', () => {
      expect(() => ztunnelLogDirectives('loud')).to.throw('--level: unrecognized logging level "loud" in "loud"; levels are trace, debug, info, warning, error, critical, off');
      expect(() => ztunnelLogDirectives('access:')).to.throw('--level: unrecognized logging level "" in "access:"');
      expect(() => ztunnelLogDirectives('ztunnel::proxy')).to.throw('unrecognized logging level "proxy" in "ztunnel::proxy"');
      expect(() => ztunnelLogDirectives(':debug')).to.throw('--level: "" in ":debug" is not a logger name');
      expect(() => ztunnelLogDirectives('a b:debug')).to.throw('"a b" in "a b:debug" is not a logger name');
    });

    it('asks /logging to list, to add directives, or to reset to warning', () => {
      expect(ztunnelLogRequest({})).to.deep.equal({ query: '' });
      expect(ztunnelLogRequest({ level: ' , ' })).to.deep.equal({ query: '' });
      expect(ztunnelLogRequest({ level: 'access:debug,info' })).to.deep.equal({ query: 'level=access%3Ddebug%2Cinfo' });
      expect(ztunnelLogRequest({ reset: true })).to.deep.equal({ query: 'reset&level=warn' });
      expect(() => ztunnelLogRequest({ reset: true, level: 'debug' })).to.throw('--level cannot be combined with --reset');
    });
  });
});

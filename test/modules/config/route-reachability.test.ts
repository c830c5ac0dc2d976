import { expect } from 'chai';
import { plainToInstance } from 'class-transformer';
import { routeReachabilityWarnings } from '../../../src/modules/config/kinds/route-reachability';
import { VirtualServiceSpec } from '../../../src/modules/config/kinds/virtual-service';

const warnings = (spec: object) => routeReachabilityWarnings(plainToInstance(VirtualServiceSpec, spec)).map((w) => `${w.type} ${w.field}: ${w.message}`);
const route = [{ destination: { host: 'reviews' } }];

describe('VirtualService rules no request can reach', () => {
  it('says nothing about distinct matches and a last catch-all rule', () => {
    expect(warnings({ hosts: ['reviews'], http: [{ match: [{ uri: { exact: '/a' } }], route }, { match: [{ uri: { exact: '/b' } }], route }, { route }] })).to.deep.equal([]);
  });

  it('compares matches by their conditions, not their names or key order', () => {
    const got = warnings({
      hosts: ['reviews'],
      http: [
        { match: [{ name: 'first', uri: { prefix: '/a' }, headers: { x: { exact: '1' } } }], route },
        { match: [{ headers: { x: { exact: '1' } }, uri: { prefix: '/a' } }, { uri: { prefix: '/b' } }], route },
      ],
    });
    expect(got).to.deep.equal(['ineffective-match spec.http[1].match[0]: rule #1 match #0 is not used (duplicate/overlapping match in rule #0)']);
  });

  it('sees a wider earlier prefix with the same conditions, but not one with another method or port', () => {
    const got = warnings({
      hosts: ['reviews'],
      http: [
        { match: [{ uri: { prefix: '/api' }, method: { exact: 'GET' } }], route },
        { match: [{ uri: { prefix: '/api/v1' } }], route },
        { match: [{ uri: { prefix: '/api/v2' }, method: { exact: 'POST' } }], route },
        { match: [{ uri: { prefix: '/api/v3' }, port: 8080 }], route },
        { match: [{ uri: { exact: '/api/v4' } }], route },
      ],
    });
    expect(got).to.deep.equal(['ineffective-match spec.http[1].match[0]: rule #1 match #0 of prefix /api/v1 is not used (duplicate/overlapping match in rule #0 of prefix /api on #0)']);
  });

  it('checks tcp and tls rules for duplicates and extra catch-alls', () => {
    const got = warnings({
      hosts: ['*.example.com'],
      gateways: ['gw'],
      tcp: [{ route }, { route }],
      tls: [{ match: [{ port: 443, sniHosts: ['a.example.com'] }], route }, { match: [{ sniHosts: ['a.example.com'], port: 443 }], route }],
    });
    expect(got).to.deep.equal([
      'unreachable-rule spec.tcp[1]: rule #1 not used (only the last rule can have no matches)',
      'ineffective-match spec.tls[1].match[0]: rule #1 match #0 is not used (duplicate/overlapping match in rule #0)',
      'unreachable-rule spec.tls[1]: rule #1 not used (all matches used by prior rules)',
    ]);
  });
});

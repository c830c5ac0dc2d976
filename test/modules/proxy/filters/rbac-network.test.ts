import { expect } from 'chai';
import { FilterConfigError, NETWORK_RBAC_TYPE_URL, rbacNetworkFilterFactory } from '../../../../src/modules/proxy/filters';
import type { ConnectionInfo, NetworkFilter } from '../../../../src/modules/proxy/http/filter-api';
import { decoded, DEFAULT_CONNECTION, TestContext } from './support';

function networkRbac(config: Record<string, unknown>, context = new TestContext()): NetworkFilter {
  return rbacNetworkFilterFactory.create('envoy.filters.network.rbac', decoded(NETWORK_RBAC_TYPE_URL, { stat_prefix: 'tcp.', ...config }), context);
}

const conn = (overrides: Partial<ConnectionInfo> = {}): ConnectionInfo => ({ ...DEFAULT_CONNECTION, ...overrides });

describe('network RBAC filter', () => {
  const policy = {
    permissions: [{ or_rules: { rules: [{ destination_port: 8080 }, { destination_port_range: { start: 9000, end: 9010 } }] } }],
    principals: [
      { authenticated: { principal_name: { safe_regex: { regex: 'spiffe://[^/]+/ns/ns-1/.*' } } } },
      { remote_ip: { address_prefix: '192.168.0.0', prefix_len: { value: 16 } } },
    ],
  };

  it('ALLOW keeps matching connections and closes the others', () => {
    const filter = networkRbac({ rules: { policies: { p: policy } } });
    expect(filter.onConnection(conn({ peerPrincipal: 'spiffe://cluster.local/ns/ns-1/sa/a' }))).to.equal('continue');
    expect(filter.onConnection(conn({ remoteAddress: '192.168.3.4', localPort: 9005 }))).to.equal('continue');
    expect(filter.onConnection(conn({ peerPrincipal: 'spiffe://cluster.local/ns/ns-2/sa/a' }))).to.equal('close');
    expect(filter.onConnection(conn({ peerPrincipal: 'spiffe://cluster.local/ns/ns-1/sa/a', localPort: 9010 }))).to.equal('close');
    expect(filter.onConnection(conn())).to.equal('close');
  });

  it('DENY closes matching connections', () => {
    const filter = networkRbac({ rules: { action: 'DENY', policies: { p: policy } } });
    expect(filter.onConnection(conn({ remoteAddress: '192.168.3.4' }))).to.equal('close');
    expect(filter.onConnection(conn())).to.equal('continue');
  });

  it('HTTP-only matchers never match a TCP connection', () => {
    const headerAllow = networkRbac({ rules: { policies: { p: { permissions: [{ header: { name: ':method', present_match: true } }], principals: [{ any: true }] } } } });
    expect(headerAllow.onConnection(conn())).to.equal('close');
    const pathAllow = networkRbac({ rules: { policies: { p: { permissions: [{ url_path: { path: { prefix: '/' } } }], principals: [{ any: true }] } } } });
    expect(pathAllow.onConnection(conn())).to.equal('close');
    // ...so a DENY on a header absent-match does apply, as Envoy's absent-header semantics say.
    const absentDeny = networkRbac({ rules: { action: 'DENY', policies: { p: { permissions: [{ header: { name: 'x', present_match: false } }], principals: [{ any: true }] } } } });
    expect(absentDeny.onConnection(conn())).to.equal('close');
  });

  it('matches requested_server_name and destination_ip', () => {
    const filter = networkRbac({
      rules: {
        policies: {
          p: {
            permissions: [{ and_rules: { rules: [{ requested_server_name: { exact: 'db.internal' } }, { destination_ip: { address_prefix: '10.0.0.0', prefix_len: { value: 8 } } }] } }],
            principals: [{ direct_remote_ip: { address_prefix: '10.1.2.3', prefix_len: { value: 32 } } }],
          },
        },
      },
    });
    expect(filter.onConnection(conn({ sni: 'db.internal' }))).to.equal('continue');
    expect(filter.onConnection(conn({ sni: 'db.internal', localAddress: '11.0.0.1' }))).to.equal('close');
    expect(filter.onConnection(conn())).to.equal('close');
  });

  it('shadow rules are logged, not enforced', () => {
    const context = new TestContext();
    const filter = networkRbac({ shadow_rules: { action: 'DENY', policies: { all: { permissions: [{ any: true }], principals: [{ any: true }] } } } }, context);
    expect(filter.onConnection(conn())).to.equal('continue');
    expect(context.logs.join('\n')).to.match(/10\.1\.2\.3:40000 shadow denied, matched policy all/);
  });

  it('refuses config it cannot honour', () => {
    expect(() => networkRbac({ rules: { policies: { p: { permissions: [{ any: true }], principals: [{ filter_state: { key: 'k', present_match: true } }] } } } })).to.throw(
      FilterConfigError,
      /principals\[0\]\.filter_state: is not supported/,
    );
  });
});

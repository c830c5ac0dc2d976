import { expect } from 'chai';
import { toProtoJson } from '../../helpers/proto-json';

/** The helper the authorization conformance cases are compared with: proto3 JSON of our objects. */
describe('proto3 JSON of built messages (test helper)', () => {
  const RBAC = 'envoy.extensions.filters.network.rbac.v3.RBAC';

  it('camelCases names, leaves out defaults, keeps oneof members set to their default, unwraps wrappers', () => {
    const json = toProtoJson(RBAC, {
      stat_prefix: '',
      rules: {
        action: 'ALLOW',
        policies: {
          'ns[foo]-policy[p]-rule[0]': {
            permissions: [{ destination_ip: { address_prefix: '10.0.0.0', prefix_len: { value: 0 } } }],
            principals: [{ authenticated: { principal_name: { exact: '', ignore_case: false } } }],
          },
        },
      },
    });
    expect(json).to.deep.equal({
      rules: {
        policies: {
          'ns[foo]-policy[p]-rule[0]': {
            permissions: [{ destinationIp: { addressPrefix: '10.0.0.0', prefixLen: 0 } }],
            principals: [{ authenticated: { principalName: { exact: '' } } }],
          },
        },
      },
    });
  });

  it('writes an Any as @type plus its message\'s fields, enums by name and durations as seconds', () => {
    const json = toProtoJson('envoy.config.listener.v3.Filter', {
      name: 'envoy.filters.network.tcp_proxy',
      typed_config: {
        '@type': 'type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy',
        stat_prefix: 's',
        cluster: 'c',
        idle_timeout: { seconds: 90, nanos: 500000000 },
      },
    });
    expect(json).to.deep.equal({
      name: 'envoy.filters.network.tcp_proxy',
      typedConfig: { '@type': 'type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy', statPrefix: 's', cluster: 'c', idleTimeout: '90.500s' },
    });
    expect(toProtoJson(RBAC, { rules: { action: 'LOG' } })).to.deep.equal({ rules: { action: 'LOG' } });
  });

  it('refuses objects that do not fit the message', () => {
    expect(() => toProtoJson(RBAC, { rules: { policies: { p: { permissions: 'all' } } } })).to.throw(/permissions/);
  });
});

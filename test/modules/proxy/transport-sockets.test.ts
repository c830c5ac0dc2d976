import { expect } from 'chai';
import { createContainer } from '../../../src/container';
import { DOWNSTREAM_TLS_CONTEXT_TYPE, RAW_BUFFER_TYPE, UPSTREAM_TLS_CONTEXT_TYPE } from '../../../src/modules/envoy/well-known';
import { BuiltInProxy } from '../../../src/modules/proxy/builtin-proxy';
import { ProxyTransportSocketFactory } from '../../../src/modules/proxy/contributions';
import { DownstreamTls, TLS_TRANSPORT_SOCKETS, UpstreamTls } from '../../../src/modules/proxy/tls/contexts';
import { SecretStore } from '../../../src/modules/proxy/tls/secrets';
import { TransportSocketFactory, TransportSockets, UpstreamTransport } from '../../../src/modules/proxy/tls/transport-sockets';
import { REPO_ROOT } from '../../helpers/run-cli';
import { usesSharedLoopbackNetwork } from '../../helpers/shared-network';

usesSharedLoopbackNetwork();

const CUSTOM = 'type.googleapis.com/example.transport.v1.Tagged';
const TLS_CONFIG = { common_tls_context: {} };

/** A plugin's transport toward clusters: plain TLS options carrying the SNI from its config. */
const tagged: TransportSocketFactory = {
  typeUrl: CUSTOM,
  upstream: (config): UpstreamTransport => ({ connectOptions: () => ({ servername: String(config.sni) }) }),
};

describe('built-in proxy transport sockets: from the contributed factories', () => {
  const sockets = new TransportSockets(TLS_TRANSPORT_SOCKETS, new SecretStore());

  it('plain text for raw_buffer or no transport socket; Envoy TLS from the core in each direction', () => {
    expect(sockets.downstream(undefined, 'f')).to.equal(undefined);
    expect(sockets.upstream({ name: 'envoy.transport_sockets.raw_buffer', typed_config: { '@type': RAW_BUFFER_TYPE } }, 'f')).to.equal(undefined);
    expect(sockets.downstream({ name: 'tls', typed_config: { '@type': DOWNSTREAM_TLS_CONTEXT_TYPE, ...TLS_CONFIG } }, 'f')).to.be.instanceOf(DownstreamTls);
    expect(sockets.upstream({ name: 'tls', typed_config: { '@type': UPSTREAM_TLS_CONTEXT_TYPE, ...TLS_CONFIG } }, 'f')).to.be.instanceOf(UpstreamTls);
  });

  it('refuses a type no factory knows for that direction, naming where it is and what would do', () => {
    expect(() => sockets.upstream({ name: 'x', typed_config: { '@type': CUSTOM } }, 'cluster c: transport_socket')).to.throw(
      `cluster c: transport_socket: transport socket x (${CUSTOM}) is not supported; expected ${UPSTREAM_TLS_CONTEXT_TYPE}`,
    );
    expect(() => sockets.upstream({ name: 'tls', typed_config: { '@type': DOWNSTREAM_TLS_CONTEXT_TYPE } }, 'f')).to.throw(/is not supported; expected .*UpstreamTlsContext/);
  });

  it('a contributed transport serves the clusters that name it, in the proxy the container builds', () => {
    const { container } = createContainer({ program: 'pilot-agent', env: {}, cwd: REPO_ROOT });
    container.bind(ProxyTransportSocketFactory).toConstantValue(tagged);
    const proxy = container.get(BuiltInProxy);
    const cluster = {
      type: 'STATIC',
      transport_socket: { name: 'example.tagged', typed_config: { '@type': CUSTOM, sni: 'db.example' } },
      load_assignment: { cluster_name: 'c', endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: 9 } } } }] }] },
    };
    proxy.clusters.applyClusters(new Map([['c', cluster]]));
    const endpoint = proxy.clusters.pick('c');
    expect(endpoint, 'an endpoint of c').to.not.equal(undefined);
    expect(proxy.clusters.transportFor('c', endpoint!)?.connectOptions()).to.deep.equal({ servername: 'db.example' });
    // Without the contribution the same cluster is refused.
    const plain = createContainer({ program: 'pilot-agent', env: {}, cwd: REPO_ROOT }).container.get(BuiltInProxy);
    expect(() => plain.clusters.applyClusters(new Map([['c', cluster]]))).to.throw(`cluster c: transport_socket: transport socket example.tagged (${CUSTOM}) is not supported`);
  });
});

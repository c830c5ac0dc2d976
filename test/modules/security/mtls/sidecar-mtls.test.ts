/** Mesh mTLS in the sidecar generator's config (Envoy and the built-in proxy), decoded from the wire. */
import { expect } from 'chai';
import { SidecarGenerator } from '../../../../src/modules/generators/sidecar';
import { AuthzHttpFilterContributor } from '../../../../src/modules/security/authz';
import { MtlsOptions, TLS_MODE_LABEL } from '../../../../src/modules/security/mtls';
import { clustersOf, endpointsOf, listenersOf, Obj } from '../../../helpers/envoy';
import { proxyOf, pushOf, workloadServiceYaml } from '../../../helpers/push';

const HTTP_PORT = '{ number: 8000, name: http, protocol: HTTP, targetPort: 8080 }';
const TCP_PORT = '{ number: 9000, name: tcp, protocol: TCP, targetPort: 9090 }';
const GRPC_PORT = '{ number: 7070, name: grpc, protocol: GRPC }';
const ECHO = 'echo.foo.svc.cluster.local';

/** Service `echo` in foo (HTTP 8000→8080, TCP 9000→9090, GRPC 7070) with one workload at 127.0.0.10, service account `echo`. */
const MESH = `${workloadServiceYaml({ namespace: 'foo', name: 'echo', address: '127.0.0.10', ports: [HTTP_PORT, TCP_PORT, GRPC_PORT], labels: { app: 'echo', version: 'v1', [TLS_MODE_LABEL]: 'mesh' } })}`.replace(
  'spec: { address: 127.0.0.10,',
  'spec: { serviceAccount: echo, address: 127.0.0.10,',
);

function doc(kind: string, group: string, namespace: string, name: string, spec: string): string {
  return `---
apiVersion: ${group}/v1
kind: ${kind}
metadata: { name: ${name}, namespace: ${namespace} }
spec: ${spec}
`;
}
const pa = (namespace: string, name: string, spec: string) => doc('PeerAuthentication', 'security.mesh.io', namespace, name, spec);
const dr = (name: string, spec: string) => doc('DestinationRule', 'networking.mesh.io', 'foo', name, `{ host: ${ECHO}, ${spec} }`);

/** `off`: a generator built without mTLS options. */
type Mtls = MtlsOptions | 'off';
const generator = (mtls: Mtls = {}) => new SidecarGenerator({ mtls: mtls === 'off' ? undefined : mtls, httpFilters: [new AuthzHttpFilterContributor()] });
/** The echo workload's own proxy, without traffic capture. */
const server = proxyOf('127.0.0.10', 'foo', { app: 'echo', version: 'v1', [TLS_MODE_LABEL]: 'mesh' }, { INTERCEPTION_MODE: 'NONE' });
const client = proxyOf('127.0.0.50', 'bar', { app: 'client' }, { INTERCEPTION_MODE: 'NONE' });

const sds = (name: string) => ({
  name,
  sds_config: {
    api_config_source: { api_type: 'GRPC', transport_api_version: 'V3', grpc_services: [{ envoy_grpc: { cluster_name: 'sds-grpc' } }], set_node_on_first_message_only: true },
    resource_api_version: 'V3',
  },
});
const TLS_PARAMS = { tls_minimum_protocol_version: 'TLSv1_2', tls_maximum_protocol_version: 'TLSv1_3' };
const downstreamTls = (alpn: string[]) => ({
  name: 'envoy.transport_sockets.tls',
  typed_config: {
    '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext',
    common_tls_context: {
      tls_params: TLS_PARAMS,
      alpn_protocols: alpn,
      tls_certificate_sds_secret_configs: [sds('default')],
      combined_validation_context: { default_validation_context: {}, validation_context_sds_secret_config: sds('ROOTCA') },
    },
    require_client_certificate: { value: true },
  },
});
const meshUpstreamTls = (sni: string, alpn: string[], sans: string[]) => ({
  name: 'envoy.transport_sockets.tls',
  typed_config: {
    '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext',
    common_tls_context: {
      tls_params: TLS_PARAMS,
      alpn_protocols: alpn,
      tls_certificate_sds_secret_configs: [sds('default')],
      combined_validation_context: {
        default_validation_context: sans.length ? { match_subject_alt_names: sans.map((exact) => ({ exact })) } : {},
        validation_context_sds_secret_config: sds('ROOTCA'),
      },
    },
    sni,
  },
});
const RAW_BUFFER = { name: 'envoy.transport_sockets.raw_buffer', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.raw_buffer.v3.RawBuffer' } };
const TLS_INSPECTOR = { name: 'envoy.filters.listener.tls_inspector', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.listener.tls_inspector.v3.TlsInspector' } };
const MESH_ALPNS = ['mesh', 'mesh-peer-exchange', 'mesh-http/1.0', 'mesh-http/1.1', 'mesh-h2'];
const ECHO_SA = 'spiffe://cluster.local/ns/foo/sa/echo';

const listeners = (config: string, mtls?: Mtls, proxy = server) => listenersOf(generator(mtls), pushOf(config), proxy) as Record<string, Obj>;
const clusters = (config: string, mtls?: Mtls) => clustersOf(generator(mtls), pushOf(config), client) as Record<string, Obj>;
const transport = (chain: Obj) => ({ match: chain.filter_chain_match, socket: chain.transport_socket?.name ?? 'plaintext' });

describe('mesh mTLS in sidecar config', () => {
  describe('inbound listeners without capture (<ip>_<port>)', () => {
    it('PERMISSIVE (the default): an mTLS chain for mesh ALPNs and a plain-text chain, with the TLS inspector; the same filters on both', () => {
      const lds = listeners(MESH);
      const http = lds['127.0.0.10_8000'];
      expect(http.listener_filters).to.deep.equal([TLS_INSPECTOR]);
      expect(http.filter_chains.map((c: Obj) => c.name)).to.deep.equal(['inbound|8000||-mtls', 'inbound|8000||']);
      expect(http.filter_chains.map(transport)).to.deep.equal([
        { match: { transport_protocol: 'tls', application_protocols: MESH_ALPNS }, socket: 'envoy.transport_sockets.tls' },
        { match: { transport_protocol: 'raw_buffer' }, socket: 'plaintext' },
      ]);
      expect(http.filter_chains[0].transport_socket).to.deep.equal(downstreamTls(['h2', 'http/1.1']));
      expect(http.filter_chains[0].filters).to.deep.equal(http.filter_chains[1].filters);
      // A TCP port also passes the application's own TLS through, and answers the peer-exchange ALPN.
      const tcp = lds['127.0.0.10_9000'];
      expect(tcp.filter_chains.map(transport)).to.deep.equal([
        { match: { transport_protocol: 'tls', application_protocols: MESH_ALPNS }, socket: 'envoy.transport_sockets.tls' },
        { match: { transport_protocol: 'tls' }, socket: 'plaintext' },
        { match: { transport_protocol: 'raw_buffer' }, socket: 'plaintext' },
      ]);
      expect(tcp.filter_chains[0].transport_socket).to.deep.equal(downstreamTls(['mesh-peer-exchange', 'h2', 'http/1.1']));
    });

    for (const [level, config] of [
      ['mesh', pa('mesh-system', 'default', '{ mtls: { mode: STRICT } }')],
      ['namespace', pa('foo', 'default', '{ mtls: { mode: STRICT } }')],
      ['workload', pa('foo', 'echo', '{ selector: { matchLabels: { app: echo } }, mtls: { mode: STRICT } }')],
      ['port', pa('foo', 'echo', '{ selector: { matchLabels: { app: echo } }, portLevelMtls: { "8080": { mode: STRICT }, "9090": { mode: STRICT } } }')],
    ]) {
      it(`STRICT at ${level} level: only the mTLS chain, requiring a client certificate`, () => {
        const lds = listeners(MESH + config);
        for (const name of ['127.0.0.10_8000', '127.0.0.10_9000']) {
          const l = lds[name];
          expect(l.listener_filters, name).to.deep.equal([TLS_INSPECTOR]);
          expect(l.filter_chains.map(transport), name).to.deep.equal([{ match: { transport_protocol: 'tls' }, socket: 'envoy.transport_sockets.tls' }]);
          expect(l.filter_chains[0].transport_socket.typed_config.require_client_certificate).to.deep.equal({ value: true });
        }
      });

      it(`DISABLE at ${level} level: only the plain-text chain, no TLS inspector`, () => {
        const lds = listeners(MESH + config.replace(/STRICT/g, 'DISABLE'));
        for (const name of ['127.0.0.10_8000', '127.0.0.10_9000']) {
          expect(lds[name].listener_filters, name).to.equal(undefined);
          expect(lds[name].filter_chains.map(transport), name).to.deep.equal([{ match: undefined, socket: 'plaintext' }]);
        }
      });
    }

    it('sets each port by its own portLevelMtls entry, the others by the workload mode', () => {
      const lds = listeners(MESH + pa('foo', 'echo', '{ selector: { matchLabels: { app: echo } }, mtls: { mode: STRICT }, portLevelMtls: { "9090": { mode: DISABLE } } }'));
      expect(lds['127.0.0.10_8000'].filter_chains.map(transport)).to.deep.equal([{ match: { transport_protocol: 'tls' }, socket: 'envoy.transport_sockets.tls' }]);
      expect(lds['127.0.0.10_9000'].filter_chains.map(transport)).to.deep.equal([{ match: undefined, socket: 'plaintext' }]);
    });

    it('keeps the chain content (HCM with RBAC) on the mTLS chain', () => {
      const policy = doc('AuthorizationPolicy', 'security.mesh.io', 'foo', 'allow-good', '{ selector: { matchLabels: { app: echo } }, rules: [{ from: [{ source: { principals: [cluster.local/ns/bar/sa/good] } }] }] }');
      const lds = listeners(MESH + pa('foo', 'default', '{ mtls: { mode: STRICT } }') + policy);
      const hcm = lds['127.0.0.10_8000'].filter_chains[0].filters[0].typed_config;
      expect(hcm.http_filters.map((f: Obj) => f.name)).to.deep.equal(['envoy.filters.http.rbac', 'envoy.filters.http.router']);
      expect(lds['127.0.0.10_9000'].filter_chains[0].filters.map((f: Obj) => f.name)).to.deep.equal(['envoy.filters.network.tcp_proxy']);
    });

    it('carries no TLS at all when the generator is built without mTLS', () => {
      const lds = listeners(MESH + pa('foo', 'default', '{ mtls: { mode: STRICT } }'), 'off');
      expect(lds['127.0.0.10_8000'].filter_chains.map(transport)).to.deep.equal([{ match: undefined, socket: 'plaintext' }]);
      expect(lds['127.0.0.10_8000'].listener_filters).to.equal(undefined);
    });
  });

  describe('mesh config meshMTLS.minProtocolVersion', () => {
    it('sets the lowest TLS version of inbound mesh mTLS (TLS_AUTO is 1.2); outbound stays 1.2 to 1.3', () => {
      const params = (mtls: MtlsOptions) => listeners(MESH, mtls)['127.0.0.10_8000'].filter_chains[0].transport_socket.typed_config.common_tls_context.tls_params;
      expect(params({})).to.deep.equal(TLS_PARAMS);
      expect(params({ minProtocolVersion: 'TLSV1_3' })).to.deep.equal({ tls_minimum_protocol_version: 'TLSv1_3', tls_maximum_protocol_version: 'TLSv1_3' });
      expect(clusters(MESH, { minProtocolVersion: 'TLSV1_3' })[`outbound|8000||${ECHO}`].transport_socket_matches[0].transport_socket.typed_config.common_tls_context.tls_params).to.deep.equal(TLS_PARAMS);
    });
  });

  describe('the virtual inbound listener (traffic capture)', () => {
    const captured = proxyOf('127.0.0.10', 'foo', { app: 'echo', version: 'v1' });

    it('splits each workload port by transport under its mode, after original_dst', () => {
      const config = MESH + pa('foo', 'echo', '{ selector: { matchLabels: { app: echo } }, mtls: { mode: STRICT }, portLevelMtls: { "9090": { mode: PERMISSIVE }, "7070": { mode: DISABLE } } }');
      const inbound = listeners(config, {}, captured).virtualInbound;
      expect(inbound.listener_filters.map((f: Obj) => f.name)).to.deep.equal(['envoy.filters.listener.original_dst', 'envoy.filters.listener.tls_inspector']);
      const chains = inbound.filter_chains.map((c: Obj) => ({ name: c.name, match: c.filter_chain_match, tls: c.transport_socket !== undefined }));
      expect(chains).to.deep.equal([
        { name: 'inbound|7070||', match: { destination_port: { value: 7070 } }, tls: false },
        { name: 'inbound|8000||-mtls', match: { destination_port: { value: 8080 }, transport_protocol: 'tls' }, tls: true },
        { name: 'inbound|9000||-mtls', match: { destination_port: { value: 9090 }, transport_protocol: 'tls', application_protocols: MESH_ALPNS }, tls: true },
        { name: 'inbound|9000||-tls', match: { destination_port: { value: 9090 }, transport_protocol: 'tls' }, tls: false },
        { name: 'inbound|9000||', match: { destination_port: { value: 9090 }, transport_protocol: 'raw_buffer' }, tls: false },
        { name: 'virtualInbound-passthrough', match: undefined, tls: false },
      ]);
    });
  });

  describe('outbound clusters', () => {
    const echoCluster = (config: string, mtls?: Mtls, name = `outbound|8000||${ECHO}`) => clusters(MESH + config, mtls)[name];

    it('auto mTLS: mesh mTLS to endpoints labelled tlsMode: mesh, plain text to the others', () => {
      const c = echoCluster('');
      expect(c.transport_socket).to.equal(undefined);
      expect(c.transport_socket_matches).to.deep.equal([
        {
          name: 'tlsMode-mesh',
          match: { fields: { tlsMode: { string_value: 'mesh' } } },
          transport_socket: meshUpstreamTls(`outbound_.8000_._.${ECHO}`, ['mesh-peer-exchange', 'mesh'], [ECHO_SA]),
        },
        { name: 'tlsMode-disabled', match: {}, transport_socket: RAW_BUFFER },
      ]);
    });

    it('offers h2 on HTTP/2 ports, and leaves the peer-exchange ALPN out when told to', () => {
      const grpc = echoCluster('', {}, `outbound|7070||${ECHO}`);
      expect(grpc.transport_socket_matches[0].transport_socket.typed_config.common_tls_context.alpn_protocols).to.deep.equal(['mesh-peer-exchange', 'mesh', 'h2']);
      const noMx = echoCluster('', { leadingAlpns: [] });
      expect(noMx.transport_socket_matches[0].transport_socket.typed_config.common_tls_context.alpn_protocols).to.deep.equal(['mesh']);
    });

    it('names identities of the configured trust domain', () => {
      const c = echoCluster('', { trustDomain: 'example.org' });
      expect(c.transport_socket_matches[0].transport_socket.typed_config.common_tls_context.combined_validation_context.default_validation_context).to.deep.equal({
        match_subject_alt_names: [{ exact: 'spiffe://example.org/ns/foo/sa/echo' }],
      });
    });

    it('no auto mTLS when it is off, when the destination namespace (or mesh) is DISABLE, or for services outside the mesh', () => {
      expect(echoCluster('', { enableAutoMtls: false }).transport_socket_matches).to.equal(undefined);
      expect(echoCluster(pa('foo', 'default', '{ mtls: { mode: DISABLE } }')).transport_socket_matches).to.equal(undefined);
      expect(echoCluster(pa('mesh-system', 'default', '{ mtls: { mode: DISABLE } }')).transport_socket_matches).to.equal(undefined);
      // A workload-level DISABLE is not visible to clients (as the incumbent): auto mTLS stays.
      expect(echoCluster(pa('foo', 'echo', '{ selector: { matchLabels: { app: echo } }, mtls: { mode: DISABLE } }')).transport_socket_matches).to.have.length(2);
      const external = MESH.replace('location: MESH_INTERNAL', 'location: MESH_EXTERNAL');
      expect(clusters(external)[`outbound|8000||${ECHO}`].transport_socket_matches).to.equal(undefined);
    });

    it('DestinationRule MESH_MUTUAL: one mTLS transport socket, its own SNI and SANs if given', () => {
      expect(echoCluster(dr('echo', 'trafficPolicy: { tls: { mode: MESH_MUTUAL } }')).transport_socket).to.deep.equal(
        meshUpstreamTls(`outbound_.8000_._.${ECHO}`, ['mesh-peer-exchange', 'mesh'], [ECHO_SA]),
      );
      const c = echoCluster(dr('echo', 'trafficPolicy: { tls: { mode: MESH_MUTUAL, sni: custom.example, subjectAltNames: [spiffe://cluster.local/ns/foo/sa/other] } }'));
      expect(c.transport_socket_matches).to.equal(undefined);
      expect(c.transport_socket).to.deep.equal(meshUpstreamTls('custom.example', ['mesh-peer-exchange', 'mesh'], ['spiffe://cluster.local/ns/foo/sa/other']));
    });

    it('DestinationRule DISABLE: no TLS, auto mTLS included', () => {
      const c = echoCluster(dr('echo', 'trafficPolicy: { tls: { mode: DISABLE } }'));
      expect([c.transport_socket, c.transport_socket_matches]).to.deep.equal([undefined, undefined]);
    });

    it('DestinationRule SIMPLE: the CA from a file (the system roots without one), SANs of the service, no client certificate', () => {
      const ctx = (tls: string) => echoCluster(dr('echo', `trafficPolicy: { tls: ${tls} }`)).transport_socket.typed_config;
      expect(ctx('{ mode: SIMPLE, caCertificates: /etc/certs/ca.pem, sni: echo.example }')).to.deep.equal({
        '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext',
        common_tls_context: {
          tls_params: TLS_PARAMS,
          combined_validation_context: {
            default_validation_context: { match_subject_alt_names: [{ exact: ECHO_SA }] },
            validation_context_sds_secret_config: sds('file-root:/etc/certs/ca.pem'),
          },
        },
        sni: 'echo.example',
      });
      expect(ctx('{ mode: SIMPLE }').common_tls_context.combined_validation_context.validation_context_sds_secret_config).to.deep.equal(sds('file-root:system'));
      expect(ctx('{ mode: SIMPLE, insecureSkipVerify: true }').common_tls_context).to.deep.equal({ tls_params: TLS_PARAMS, validation_context: {} });
    });

    it('DestinationRule MUTUAL: client certificate and key from files, or everything from a credential', () => {
      const ctx = (tls: string) => echoCluster(dr('echo', `trafficPolicy: { tls: ${tls} }`)).transport_socket.typed_config.common_tls_context;
      const files = ctx('{ mode: MUTUAL, clientCertificate: /c/cert.pem, privateKey: /c/key.pem, caCertificates: /c/ca.pem, subjectAltNames: [echo.example] }');
      expect(files.tls_certificate_sds_secret_configs).to.deep.equal([sds('file-cert:/c/cert.pem~/c/key.pem')]);
      expect(files.combined_validation_context).to.deep.equal({
        default_validation_context: { match_subject_alt_names: [{ exact: 'echo.example' }] },
        validation_context_sds_secret_config: sds('file-root:/c/ca.pem'),
      });
      const credential = ctx('{ mode: MUTUAL, credentialName: echo-client }');
      expect(credential.tls_certificate_sds_secret_configs).to.deep.equal([sds('echo-client')]);
      expect(credential.combined_validation_context.validation_context_sds_secret_config).to.deep.equal(sds('echo-client-cacert'));
    });

    it('takes the TLS of the port-level settings and of subsets (which get their own SNI)', () => {
      const rule = dr(
        'echo',
        `trafficPolicy: { tls: { mode: DISABLE }, portLevelSettings: [{ port: { number: 9000 }, tls: { mode: MESH_MUTUAL } }] },
  subsets: [{ name: v1, labels: { version: v1 }, trafficPolicy: { tls: { mode: MESH_MUTUAL } } }, { name: v2, labels: { version: v2 } }]`,
      );
      const cds = clusters(MESH + rule);
      expect(cds[`outbound|8000||${ECHO}`].transport_socket).to.equal(undefined);
      expect(cds[`outbound|9000||${ECHO}`].transport_socket.typed_config.sni).to.equal(`outbound_.9000_._.${ECHO}`);
      expect(cds[`outbound|8000|v1|${ECHO}`].transport_socket.typed_config.sni).to.equal(`outbound_.8000_.v1_.${ECHO}`);
      expect(cds[`outbound|8000|v2|${ECHO}`].transport_socket).to.equal(undefined);
      // Port-level settings of the top policy replace it for that port; the subset's own TLS applies to every port.
      expect(cds[`outbound|9000|v2|${ECHO}`].transport_socket.typed_config.sni).to.equal(`outbound_.9000_.v2_.${ECHO}`);
    });

    it('carries no TLS at all when the generator is built without mTLS', () => {
      const c = echoCluster(dr('echo', 'trafficPolicy: { tls: { mode: MESH_MUTUAL } }'), 'off');
      expect([c.transport_socket, c.transport_socket_matches]).to.deep.equal([undefined, undefined]);
    });
  });

  describe('EDS endpoints', () => {
    it('carry envoy.transport_socket_match { tlsMode } when their workload announces a TLS mode', () => {
      const config = `${MESH}---
apiVersion: networking.mesh.io/v1
kind: WorkloadEntry
metadata: { name: echo-plain, namespace: foo }
spec: { address: 127.0.0.11, labels: { app: echo } }
`;
      const eds = endpointsOf(generator(), pushOf(config), client, [`outbound|8000||${ECHO}`])[`outbound|8000||${ECHO}`] as Obj;
      const byAddress = Object.fromEntries(
        eds.endpoints[0].lb_endpoints.map((e: Obj) => [e.endpoint.address.socket_address.address, e.metadata?.filter_metadata?.['envoy.transport_socket_match']]),
      );
      expect(byAddress).to.deep.equal({ '127.0.0.10': { fields: { tlsMode: { string_value: 'mesh' } } }, '127.0.0.11': undefined });
    });
  });
});

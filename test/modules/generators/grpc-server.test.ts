/** Proxyless gRPC: server listeners (gRFC A36) and client-cluster mTLS, decoded from the wire. */
import { expect } from 'chai';
import { GrpcGenerator } from '../../../src/modules/generators/grpc/generator';
import { GRPC_SERVER_LISTENER_TEMPLATE, parseServerListenerName } from '../../../src/modules/generators/grpc/server-listener';
import { AuthzHttpFilterContributor } from '../../../src/modules/security/authz';
import { TLS_MODE_LABEL } from '../../../src/modules/security/mtls';
import { TypeUrl } from '../../../src/modules/envoy/type-urls';
import { decodedOf, HCM_TYPE, Obj, ROUTER_FILTER } from '../../helpers/envoy';
import { proxyOf, pushOf, workloadServiceYaml } from '../../helpers/push';

const HOST = 'echo.foo.svc.cluster.local';
const LABELS = { app: 'echo', version: 'v1', [TLS_MODE_LABEL]: 'mesh' };
/** Service echo (GRPC 7070 → workload port 17070) with one workload, service account `echo`. */
const MESH = workloadServiceYaml({ namespace: 'foo', name: 'echo', address: '127.0.0.21', ports: ['{ number: 7070, name: grpc, protocol: GRPC, targetPort: 17070 }'], labels: LABELS }).replace(
  'spec: { address: 127.0.0.21,',
  'spec: { serviceAccount: echo, address: 127.0.0.21,',
);
const LISTENER = GRPC_SERVER_LISTENER_TEMPLATE.replace('%s', '127.0.0.21:17070');

function doc(kind: string, group: string, name: string, spec: string): string {
  return `---
apiVersion: ${group}/v1
kind: ${kind}
metadata: { name: ${name}, namespace: foo }
spec: ${spec}
`;
}
const pa = (name: string, spec: string) => doc('PeerAuthentication', 'security.mesh.io', name, spec);
const authz = (name: string, spec: string) => doc('AuthorizationPolicy', 'security.mesh.io', name, spec);

const generator = new GrpcGenerator({ serverHttpFilters: [new AuthzHttpFilterContributor()], mtls: {} });
const serverNode = (labels: Record<string, string> = LABELS) => proxyOf('127.0.0.21', 'foo', labels, { GENERATOR: 'grpc' });

function listener(config: string, labels?: Record<string, string>, name = LISTENER, gen = generator): Obj | undefined {
  return decodedOf<Obj>(gen, TypeUrl.Listener, pushOf(MESH + config), serverNode(labels), [name])[name];
}

const CERT_PROVIDER_TLS = {
  name: 'envoy.transport_sockets.tls',
  typed_config: {
    '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext',
    common_tls_context: {
      tls_certificate_provider_instance: { instance_name: 'default', certificate_name: 'default' },
      validation_context: { ca_certificate_provider_instance: { instance_name: 'default', certificate_name: 'ROOTCA' } },
    },
    require_client_certificate: { value: true },
  },
};

const hcmOf = (l: Obj) => l.filter_chains[0].filters[0].typed_config;

describe('proxyless gRPC server listeners (xds.mesh.io/grpc/lds/inbound/<ip>:<port>)', () => {
  it('parses the names the bootstrap template makes, IPv6 included, and nothing else', () => {
    expect(parseServerListenerName(LISTENER)).to.deep.equal({ address: '127.0.0.21', port: 17070 });
    expect(parseServerListenerName(GRPC_SERVER_LISTENER_TEMPLATE.replace('%s', '[::]:8080'))).to.deep.equal({ address: '::', port: 8080 });
    for (const bad of ['echo.foo.svc.cluster.local:7070', 'xds.mesh.io/grpc/lds/inbound/host:80', 'xds.mesh.io/grpc/lds/inbound/127.0.0.1:0', 'xds.mesh.io/grpc/lds/inbound/127.0.0.1']) {
      expect(parseServerListenerName(bad), bad).to.equal(undefined);
    }
  });

  it('STRICT: the bound address, one mTLS chain (certificate providers, client certificate required), a non-forwarding route, router last', () => {
    const l = listener(pa('default', '{ mtls: { mode: STRICT } }'))!;
    expect(l.name).to.equal(LISTENER);
    expect(l.address).to.deep.equal({ socket_address: { address: '127.0.0.21', port_value: 17070 } });
    expect(l.listener_filters).to.equal(undefined);
    expect(l.filter_chains).to.have.length(1);
    expect(l.filter_chains[0].filter_chain_match).to.equal(undefined);
    expect(l.filter_chains[0].transport_socket).to.deep.equal(CERT_PROVIDER_TLS);
    expect(hcmOf(l)).to.deep.equal({
      '@type': HCM_TYPE,
      stat_prefix: 'inbound_127.0.0.21_17070',
      route_config: {
        name: 'inbound|7070||',
        virtual_hosts: [{ name: 'inbound|grpc|7070', domains: ['*'], routes: [{ name: 'default', match: { prefix: '/' }, non_forwarding_action: {} }] }],
      },
      http_filters: [ROUTER_FILTER],
    });
  });

  it('PERMISSIVE serves mTLS to a workload announcing it (auto-mTLS clients use it) and plain text otherwise; DISABLE serves plain text', () => {
    expect(listener('')!.filter_chains.map((c: Obj) => [c.name, c.transport_socket !== undefined])).to.deep.equal([['inbound-mtls', true]]);
    expect(listener('', { app: 'echo', version: 'v1' })!.filter_chains.map((c: Obj) => [c.name, c.transport_socket !== undefined])).to.deep.equal([['inbound-plaintext', false]]);
    expect(listener(pa('default', '{ mtls: { mode: DISABLE } }'))!.filter_chains.map((c: Obj) => [c.name, c.transport_socket !== undefined])).to.deep.equal([['inbound-plaintext', false]]);
  });

  it('follows the port-level mode of the workload port it binds', () => {
    const config = pa('echo', '{ selector: { matchLabels: { app: echo } }, mtls: { mode: STRICT }, portLevelMtls: { "17070": { mode: DISABLE } } }');
    expect(listener(config)!.filter_chains[0].transport_socket).to.equal(undefined);
    expect(listener(config.replace('"17070"', '"17071"'))!.filter_chains[0].transport_socket).to.deep.equal(CERT_PROVIDER_TLS);
  });

  it('runs the enforceable RBAC filters of the AuthorizationPolicies (DENY, ALLOW), uniquely named, and leaves AUDIT out', () => {
    const config =
      pa('default', '{ mtls: { mode: STRICT } }') +
      authz('deny-bad', '{ action: DENY, rules: [{ from: [{ source: { principals: [cluster.local/ns/foo/sa/bad] } }] }] }') +
      authz('allow-good', '{ rules: [{ from: [{ source: { principals: [cluster.local/ns/foo/sa/good] } }] }] }') +
      authz('audit', '{ action: AUDIT, rules: [{}] }');
    const filters = hcmOf(listener(config)!).http_filters as Obj[];
    expect(filters.map((f) => [f.name, f.typed_config.rules?.action])).to.deep.equal([
      ['envoy.filters.http.rbac', 'DENY'],
      ['envoy.filters.http.rbac.2', 'ALLOW'],
      ['envoy.filters.http.router', undefined],
    ]);
    expect(filters[1].typed_config.rules.policies['ns[foo]-policy[allow-good]-rule[0]'].principals).to.deep.equal([
      { and_ids: { ids: [{ or_ids: { ids: [{ authenticated: { principal_name: { exact: 'spiffe://cluster.local/ns/foo/sa/good' } } }] } }] } },
    ]);
  });

  it('knows nothing of ports the workload serves no service on, of other names, or of workloads that are not the node', () => {
    expect(listener('', undefined, GRPC_SERVER_LISTENER_TEMPLATE.replace('%s', '127.0.0.21:9999'))).to.equal(undefined);
    expect(listener('', undefined, 'xds.mesh.io/grpc/lds/inbound/not-an-address')).to.equal(undefined);
    const other = proxyOf('127.0.0.99', 'foo', LABELS, { GENERATOR: 'grpc' });
    expect(decodedOf(generator, TypeUrl.Listener, pushOf(MESH), other, [LISTENER])).to.deep.equal({});
  });

  it('serves plain text only when built without mTLS', () => {
    const plain = new GrpcGenerator({ serverHttpFilters: [new AuthzHttpFilterContributor()] });
    expect(listener(pa('default', '{ mtls: { mode: STRICT } }'), undefined, LISTENER, plain)!.filter_chains[0].transport_socket).to.equal(undefined);
  });
});

describe('proxyless gRPC client clusters: mTLS with certificate providers', () => {
  const client = proxyOf('127.0.0.50', 'bar', {}, { GENERATOR: 'grpc' });
  const cluster = (config: string, mtls = {}) =>
    decodedOf<Obj>(new GrpcGenerator({ mtls }), TypeUrl.Cluster, pushOf(config), client, [`outbound|7070||${HOST}`])[`outbound|7070||${HOST}`];
  const upstream = (sans: string[]) => ({
    name: 'envoy.transport_sockets.tls',
    typed_config: {
      '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext',
      common_tls_context: {
        tls_certificate_provider_instance: { instance_name: 'default', certificate_name: 'default' },
        validation_context: {
          ca_certificate_provider_instance: { instance_name: 'default', certificate_name: 'ROOTCA' },
          match_subject_alt_names: sans.map((exact) => ({ exact })),
        },
      },
    },
  });
  const dr = (tls: string) => doc('DestinationRule', 'networking.mesh.io', 'echo', `{ host: ${HOST}, trafficPolicy: { tls: ${tls} } }`);
  const unlabelled = `${MESH}---
apiVersion: networking.mesh.io/v1
kind: WorkloadEntry
metadata: { name: echo-plain, namespace: foo }
spec: { address: 127.0.0.22, labels: { app: echo } }
`;

  it('auto mTLS: one transport socket when every endpoint announces mTLS, accepting the service accounts behind it', () => {
    const c = cluster(MESH);
    expect(c.transport_socket_matches).to.equal(undefined);
    expect(c.transport_socket).to.deep.equal(upstream(['spiffe://cluster.local/ns/foo/sa/echo']));
  });

  it('auto mTLS stays off when some endpoint does not announce it, when the namespace is DISABLE, or when auto mTLS is off', () => {
    expect(cluster(unlabelled).transport_socket).to.equal(undefined);
    expect(cluster(MESH + pa('default', '{ mtls: { mode: DISABLE } }')).transport_socket).to.equal(undefined);
    expect(cluster(MESH, { enableAutoMtls: false }).transport_socket).to.equal(undefined);
  });

  it('DestinationRule MESH_MUTUAL uses mTLS whatever the endpoints say; DISABLE, SIMPLE and MUTUAL (no certificate provider for them) do not', () => {
    expect(cluster(unlabelled + dr('{ mode: MESH_MUTUAL, subjectAltNames: [spiffe://cluster.local/ns/foo/sa/x] }')).transport_socket).to.deep.equal(
      upstream(['spiffe://cluster.local/ns/foo/sa/x']),
    );
    expect(cluster(MESH + dr('{ mode: DISABLE }')).transport_socket).to.equal(undefined);
    expect(cluster(MESH + dr('{ mode: SIMPLE, caCertificates: /ca.pem }')).transport_socket).to.equal(undefined);
  });
});

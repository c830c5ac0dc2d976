/**
 * CUSTOM AuthorizationPolicy with the mesh config's extension providers: the incumbent's
 * filter pair (shadow RBAC tagging `mesh-ext-authz-...` requests, then ext_authz enabled by
 * that tag, pointed at `outbound|<port>||<host>`), the TCP variant for gRPC providers, and
 * the fail-closed DENY for providers that are missing, unusable or not alone.
 */
import { expect } from 'chai';
import { DEFAULT_MESH_CONFIG, parseMeshConfig } from '../../../src/modules/mesh-config';
import { FilterChainContext } from '../../../src/modules/model/generator';
import { PushContext } from '../../../src/modules/model';
import { ServicePort } from '../../../src/modules/registry/model';
import { AuthzHttpFilterContributor, AuthzLog, AuthzNetworkFilterContributor } from '../../../src/modules/security/authz';
import { Obj } from '../../helpers/envoy';
import { toProtoJson } from '../../helpers/proto-json';
import { proxyOf, pushOf, serviceEntryYaml } from '../../helpers/push';

const HTTPBIN = proxyOf('10.0.0.1', 'foo', { app: 'httpbin', version: 'v1' });
const HTTP_PORT: ServicePort = { name: 'http', number: 8000, protocol: 'HTTP', targetPort: 8080 };
const TCP_PORT: ServicePort = { name: 'tcp', number: 9000, protocol: 'TCP', targetPort: 9001 };
const HTTP_FILTER = 'envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter';
const NETWORK_FILTER = 'envoy.config.listener.v3.Filter';

const MESH = `
extensionProviders:
- name: ext-authz-http
  envoyExtAuthzHttp:
    service: foo/my-custom-ext-authz.foo.svc.cluster.local
    port: 9000
    timeout: 10s
    failOpen: true
    statusOnError: "403"
    pathPrefix: /check
    includeRequestHeadersInCheck: [x-custom-id, "x-prefix-*", "*-suffix"]
    includeAdditionalHeadersInCheck: { x-header-2: value-2, x-header-1: value-1 }
    headersToUpstreamOnAllow: [Authorization, "x-prefix-*", "*-suffix"]
    headersToDownstreamOnDeny: [Set-cookie, "x-prefix-*", "*-suffix"]
    includeRequestBodyInCheck: { maxRequestBytes: 2048, allowPartialMessage: true, packAsBytes: true }
- name: ext-authz-grpc
  envoyExtAuthzGrpc: { service: my-custom-ext-authz.foo.svc.cluster.local, port: 9000, timeout: 0.002s, failOpen: true, clearRouteCache: true }
- name: broken
  envoyExtAuthzHttp: { service: foo/my-custom-ext-authz.foo.svc.cluster.local, port: 0 }
- name: nowhere
  envoyExtAuthzHttp: { service: other/my-custom-ext-authz.foo.svc.cluster.local, port: 9000 }
`;

function policy(name: string, provider: string, path: string, dryRun = false): string {
  return `---
apiVersion: security.mesh.io/v1
kind: AuthorizationPolicy
metadata: { name: ${name}, namespace: foo${dryRun ? ', annotations: { "mesh.io/dry-run": "true" }' : ''} }
spec:
  selector: { matchLabels: { app: httpbin } }
  action: CUSTOM
  provider: { name: ${provider} }
  rules: [{ to: [{ operation: { paths: ["${path}"] } }] }]
`;
}

const AUTHZ_SERVICE = serviceEntryYaml('foo', 'ext-authz', 'my-custom-ext-authz.foo.svc.cluster.local', 'STATIC', '{ number: 9000, name: http, protocol: HTTP }');

/** The policies' push with the mesh config of MESH (the providers). */
function pushWith(policies: string, mesh = MESH): PushContext {
  const base = pushOf(`${AUTHZ_SERVICE}${policies}`);
  return new PushContext(base.version, base.config, base.registry, { ...base.options, mesh: parseMeshConfig(mesh, 'mesh.yaml') });
}

function recordingLog(): AuthzLog & { errors: string[] } {
  const errors: string[] = [];
  return { errors, error: (m) => errors.push(m), debug: () => undefined };
}

const chain = (push: PushContext, port: ServicePort = HTTP_PORT): FilterChainContext => ({ push, proxy: HTTPBIN, direction: 'inbound', port });
const httpFilters = (push: PushContext, log?: AuthzLog) => new AuthzHttpFilterContributor({ log }).httpFilters(chain(push)).map((f) => toProtoJson(HTTP_FILTER, f) as Obj);
const tcpFilters = (push: PushContext, log?: AuthzLog) => (new AuthzNetworkFilterContributor({ log }).networkFilters(chain(push, TCP_PORT)).before ?? []).map((f) => toProtoJson(NETWORK_FILTER, f) as Obj);

const TAG_MATCHER = (filter: string) => ({
  filter,
  path: [{ key: 'mesh_ext_authz_shadow_effective_policy_id' }],
  value: { stringMatch: { prefix: 'mesh-ext-authz' } },
});

describe('CUSTOM authorization with extension providers', () => {
  it('an HTTP provider: a shadow RBAC filter tagging the CUSTOM rules, then ext_authz on the provider cluster, every provider field as the incumbent maps it', () => {
    const filters = httpFilters(pushWith(policy('httpbin-1', 'ext-authz-http', '/httpbin1') + policy('httpbin-2', 'ext-authz-http', '/httpbin2')));
    expect(filters.map((f) => f.name)).to.deep.equal(['envoy.filters.http.rbac', 'envoy.filters.http.ext_authz']);
    expect(filters[0].typedConfig).to.deep.equal({
      '@type': 'type.googleapis.com/envoy.extensions.filters.http.rbac.v3.RBAC',
      shadowRules: {
        action: 'DENY',
        policies: {
          'mesh-ext-authz-ext-authz-http-ns[foo]-policy[httpbin-1]-rule[0]': {
            permissions: [{ andRules: { rules: [{ orRules: { rules: [{ urlPath: { path: { exact: '/httpbin1' } } }] } }] } }],
            principals: [{ andIds: { ids: [{ any: true }] } }],
          },
          'mesh-ext-authz-ext-authz-http-ns[foo]-policy[httpbin-2]-rule[0]': {
            permissions: [{ andRules: { rules: [{ orRules: { rules: [{ urlPath: { path: { exact: '/httpbin2' } } }] } }] } }],
            principals: [{ andIds: { ids: [{ any: true }] } }],
          },
        },
      },
      shadowRulesStatPrefix: 'mesh_ext_authz_',
    });
    const patterns = (a: string, b: string, c: string) => ({
      patterns: [{ exact: a, ignoreCase: true }, { prefix: b, ignoreCase: true }, { suffix: c, ignoreCase: true }],
    });
    const { authorizationRequest, ...service } = filters[1].typedConfig.httpService;
    expect(authorizationRequest.headersToAdd.map((h: Obj) => [h.key, h.value])).to.deep.equal([['x-header-1', 'value-1'], ['x-header-2', 'value-2']]);
    expect({ ...filters[1].typedConfig, httpService: service }).to.deep.equal({
      '@type': 'type.googleapis.com/envoy.extensions.filters.http.ext_authz.v3.ExtAuthz',
      httpService: {
        serverUri: { uri: 'http://my-custom-ext-authz.foo.svc.cluster.local', cluster: 'outbound|9000||my-custom-ext-authz.foo.svc.cluster.local', timeout: '10s' },
        pathPrefix: '/check',
        authorizationResponse: {
          allowedUpstreamHeaders: patterns('Authorization', 'x-prefix-', '-suffix'),
          allowedClientHeaders: patterns('Set-cookie', 'x-prefix-', '-suffix'),
        },
      },
      allowedHeaders: patterns('x-custom-id', 'x-prefix-', '-suffix'),
      transportApiVersion: 'V3',
      filterEnabledMetadata: TAG_MATCHER('envoy.filters.http.rbac'),
      failureModeAllow: true,
      statusOnError: { code: 'Forbidden' },
      withRequestBody: { maxRequestBytes: 2048, allowPartialMessage: true, packAsBytes: true },
    });
  });

  it('a gRPC provider: ext_authz over gRPC on HTTP chains, and the network pair on TCP chains; an HTTP provider gives TCP chains nothing', () => {
    const grpc = pushWith(policy('p', 'ext-authz-grpc', '/x'));
    const http = httpFilters(grpc);
    expect(http[1].typedConfig).to.deep.equal({
      '@type': 'type.googleapis.com/envoy.extensions.filters.http.ext_authz.v3.ExtAuthz',
      grpcService: {
        envoyGrpc: { clusterName: 'outbound|9000||my-custom-ext-authz.foo.svc.cluster.local', authority: 'outbound_.9000_._.my-custom-ext-authz.foo.svc.cluster.local' },
        timeout: '0.002s',
      },
      transportApiVersion: 'V3',
      filterEnabledMetadata: TAG_MATCHER('envoy.filters.http.rbac'),
      failureModeAllow: true,
      clearRouteCache: true,
    });
    const tcp = tcpFilters(grpc);
    expect(tcp.map((f) => f.name)).to.deep.equal(['envoy.filters.network.rbac', 'envoy.filters.network.ext_authz']);
    expect(tcp[0].typedConfig.statPrefix).to.equal('tcp.');
    expect(tcp[0].typedConfig.shadowRulesStatPrefix).to.equal('mesh_ext_authz_');
    expect(tcp[1].typedConfig).to.deep.include({ statPrefix: 'tcp.', failureModeAllow: true, filterEnabledMetadata: TAG_MATCHER('envoy.filters.network.rbac') });
    expect(tcpFilters(pushWith(policy('p', 'ext-authz-http', '/x')))).to.deep.equal([]);
  });

  it('fails closed, as the incumbent: a provider that is not defined, cannot be used, whose service is unknown, or not the only one, denies what its rules select', () => {
    const denied = (policies: string) => {
      const log = recordingLog();
      const filters = httpFilters(pushWith(policies), log);
      return { rules: filters.map((f) => [f.name, f.typedConfig.rules?.action, Object.keys(f.typedConfig.rules?.policies ?? {})]), errors: log.errors };
    };
    expect(denied(policy('p', 'undefined-one', '/x'))).to.deep.equal({
      rules: [['envoy.filters.http.rbac', 'DENY', ['mesh-ext-authz-undefined-one-ns[foo]-policy[p]-rule[0]-deny-due-to-bad-CUSTOM-action']]],
      errors: ['failed to process CUSTOM action for provider undefined-one, will generate deny configs: available providers are [broken ext-authz-grpc ext-authz-http nowhere] but found "undefined-one"'],
    });
    expect(denied(policy('p', 'broken', '/x')).errors).to.deep.equal([
      'failed to process CUSTOM action for provider broken, will generate deny configs: found errors in provider broken: port must be in the range [1, 65535], found: 0',
    ]);
    expect(denied(policy('p', 'nowhere', '/x')).errors).to.deep.equal([
      'failed to process CUSTOM action for provider nowhere, will generate deny configs: failed to parse extension provider "nowhere": could not find service other/my-custom-ext-authz.foo.svc.cluster.local:9000 in the mesh service registry',
    ]);
    const two = denied(policy('a', 'ext-authz-http', '/a') + policy('b', 'ext-authz-grpc', '/b'));
    expect(two.rules).to.deep.equal([
      ['envoy.filters.http.rbac', 'DENY', ['mesh-ext-authz-ext-authz-grpc-ns[foo]-policy[b]-rule[0]-deny-due-to-bad-CUSTOM-action']],
      ['envoy.filters.http.rbac', 'DENY', ['mesh-ext-authz-ext-authz-http-ns[foo]-policy[a]-rule[0]-deny-due-to-bad-CUSTOM-action']],
    ]);
    expect(two.errors[0]).to.match(/only 1 provider can be used per workload, found multiple providers: \[ext-authz-grpc ext-authz-http\]$/);
    // The default mesh config has no authorizer at all.
    expect(denied(policy('p', 'ext-authz-http', '/x')).rules[0][0]).to.equal('envoy.filters.http.rbac');
    expect(httpFilters(pushWith(policy('p', 'ext-authz-http', '/x'), ''))[0].typedConfig.rules.action).to.equal('DENY');
    expect(DEFAULT_MESH_CONFIG.extensionProviders.some((p) => p.kind === 'envoyExtAuthzHttp')).to.equal(false);
  });

  it('comes before the DENY and ALLOW filters; dry-run CUSTOM policies are left out', () => {
    const push = pushWith(
      policy('p', 'ext-authz-http', '/x') +
        policy('trial', 'ext-authz-http', '/trial', true) +
        '---\napiVersion: security.mesh.io/v1\nkind: AuthorizationPolicy\nmetadata: { name: allow, namespace: foo }\nspec:\n  rules: [{}]\n',
    );
    const filters = httpFilters(push);
    expect(filters.map((f) => f.name)).to.deep.equal(['envoy.filters.http.rbac', 'envoy.filters.http.ext_authz', 'envoy.filters.http.rbac']);
    expect(Object.keys(filters[0].typedConfig.shadowRules.policies)).to.deep.equal(['mesh-ext-authz-ext-authz-http-ns[foo]-policy[p]-rule[0]']);
    expect(filters[2].typedConfig.rules.action ?? 'ALLOW').to.equal('ALLOW');
  });
});

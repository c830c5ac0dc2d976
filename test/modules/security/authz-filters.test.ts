import { expect } from 'chai';
import { AuthorizationPolicySpec } from '../../../src/modules/config/kinds/authorization-policy';
import { ConfigResource } from '../../../src/modules/config/resource';
import { FilterChainContext } from '../../../src/modules/model/generator';
import { SidecarGenerator } from '../../../src/modules/generators/sidecar';
import { PushContext } from '../../../src/modules/model';
import { ServicePort } from '../../../src/modules/registry/model';
import {
  AuthzHttpFilterContributor,
  AuthzLog,
  AuthzNetworkFilterContributor,
  buildAuthzFilters,
  TrustDomainBundle,
} from '../../../src/modules/security/authz';
import { decodeMessage, encodeMessage } from '../../../src/modules/envoy/protos';
import { inboundFilters, listenersOf, Obj, outboundFilters } from '../../helpers/envoy';
import { toProtoJson } from '../../helpers/proto-json';
import { proxyOf, pushOf, serviceEntryYaml, workloadServiceYaml } from '../../helpers/push';

const HTTPBIN = proxyOf('10.0.0.1', 'foo', { app: 'httpbin', version: 'v1' });
const HTTP_PORT: ServicePort = { name: 'http', number: 8000, protocol: 'HTTP', targetPort: 8080 };
const TCP_PORT: ServicePort = { name: 'tcp', number: 9000, protocol: 'TCP', targetPort: 9001 };
const HTTP_FILTER_TYPE = 'envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter';

/** An AuthorizationPolicy document; `spec` is YAML flow or block text indented by two spaces. */
function policy(namespace: string, name: string, spec: string, annotations?: Record<string, string>): string {
  const meta = annotations ? `, annotations: ${JSON.stringify(annotations)}` : '';
  return `---
apiVersion: security.mesh.io/v1
kind: AuthorizationPolicy
metadata: { name: ${name}, namespace: ${namespace}${meta} }
spec:
${spec}
`;
}

const allowPath = (path: string) => `  rules: [{ to: [{ operation: { paths: ["${path}"] } }] }]`;

function chain(push: PushContext, direction: 'inbound' | 'outbound' = 'inbound', port: ServicePort = HTTP_PORT, proxy = HTTPBIN): FilterChainContext {
  return { push, proxy, direction, port };
}

const httpFilters = (yaml: string, options = {}) => new AuthzHttpFilterContributor(options).httpFilters(chain(pushOf(yaml)));
/** The filters as proto3 JSON: what the proxy receives. */
const asJson = (filters: object[]) => filters.map((f) => toProtoJson(HTTP_FILTER_TYPE, f) as Obj);
/** `ns[...]-policy[...]-rule[...]` names of enforced and shadow rules, per filter, with the action. */
const summary = (filters: object[]) =>
  asJson(filters).map((f) => ({
    action: f.typedConfig.rules ? (f.typedConfig.rules.action ?? 'ALLOW') : undefined,
    rules: Object.keys(f.typedConfig.rules?.policies ?? {}),
    shadow: Object.keys(f.typedConfig.shadowRules?.policies ?? {}),
    shadowAction: f.typedConfig.shadowRules ? (f.typedConfig.shadowRules.action ?? 'ALLOW') : undefined,
    prefix: f.typedConfig.shadowRulesStatPrefix,
  }));

function recordingLog(): AuthzLog & { errors: string[]; debugs: string[] } {
  const errors: string[] = [];
  const debugs: string[] = [];
  return { errors, debugs, error: (m) => errors.push(m), debug: (m) => debugs.push(m) };
}

describe('authorization filters', () => {
  describe('which policies apply', () => {
    it('a policy whose selector does not match the workload gives nothing', () => {
      expect(httpFilters(policy('foo', 'other-app', `  selector: { matchLabels: { app: productpage } }\n${allowPath('/a')}`))).to.deep.equal([]);
      expect(httpFilters(policy('foo', 'other-version', `  selector: { matchLabels: { app: httpbin, version: v2 } }\n${allowPath('/a')}`))).to.deep.equal([]);
    });

    it('policies of the root namespace apply to every workload, before the namespace\'s own', () => {
      const yaml = policy('foo', 'own', allowPath('/own')) + policy('mesh-system', 'mesh-wide', allowPath('/root'));
      expect(summary(httpFilters(yaml))[0].rules).to.deep.equal(['ns[mesh-system]-policy[mesh-wide]-rule[0]', 'ns[foo]-policy[own]-rule[0]']);
    });

    it('a root namespace policy with a selector applies only where the selector matches', () => {
      expect(httpFilters(policy('mesh-system', 'for-others', `  selector: { matchLabels: { app: other } }\n${allowPath('/a')}`))).to.deep.equal([]);
      expect(summary(httpFilters(policy('mesh-system', 'for-httpbin', `  selector: { matchLabels: { app: httpbin } }\n${allowPath('/a')}`)))[0].rules).to.deep.equal([
        'ns[mesh-system]-policy[for-httpbin]-rule[0]',
      ]);
    });

    it('policies of another namespace are ignored, even when their selector matches', () => {
      expect(httpFilters(policy('bar', 'elsewhere', `  selector: { matchLabels: { app: httpbin } }\n${allowPath('/a')}`))).to.deep.equal([]);
    });

    it('policies attached by targetRef are not selected by labels', () => {
      expect(httpFilters(policy('foo', 'by-ref', `  targetRefs: [{ kind: Service, group: "", name: httpbin }]\n${allowPath('/a')}`))).to.deep.equal([]);
    });
  });

  describe('filters in chain order', () => {
    const all = [
      policy('foo', 'allow-a', allowPath('/allow')),
      policy('foo', 'deny-a', `  action: DENY\n${allowPath('/deny')}`),
      policy('foo', 'audit-a', `  action: AUDIT\n${allowPath('/audit')}`),
      policy('mesh-system', 'deny-root', `  action: DENY\n${allowPath('/root')}`),
    ].join('');

    it('AUDIT (as LOG), then DENY (root namespace and own together), then ALLOW, one filter each', () => {
      expect(summary(httpFilters(all)).map(({ action, rules }) => ({ action, rules }))).to.deep.equal([
        { action: 'LOG', rules: ['ns[foo]-policy[audit-a]-rule[0]'] },
        { action: 'DENY', rules: ['ns[mesh-system]-policy[deny-root]-rule[0]', 'ns[foo]-policy[deny-a]-rule[0]'] },
        { action: 'ALLOW', rules: ['ns[foo]-policy[allow-a]-rule[0]'] },
      ]);
    });

    it('no ALLOW policy: no ALLOW filter, so whatever DENY does not deny is allowed', () => {
      const filters = httpFilters(policy('foo', 'deny-a', `  action: DENY\n${allowPath('/deny')}`));
      expect(summary(filters).map((f) => f.action)).to.deep.equal(['DENY']);
    });

    it('no policy at all: no filter', () => {
      expect(httpFilters(serviceEntryYaml('foo', 'se', 'a.example.com', 'DNS', '{ number: 80, name: http, protocol: HTTP }'))).to.deep.equal([]);
    });

    it('the same order on TCP chains, as network filters', () => {
      const { before } = new AuthzNetworkFilterContributor().networkFilters(chain(pushOf(all), 'inbound', TCP_PORT));
      expect(before?.map((f) => [f.name, (f.typed_config.rules as Obj).action, f.typed_config.stat_prefix])).to.deep.equal([
        ['envoy.filters.network.rbac', 'LOG', 'tcp.'],
        ['envoy.filters.network.rbac', 'DENY', 'tcp.'],
        ['envoy.filters.network.rbac', 'ALLOW', 'tcp.'],
      ]);
    });

    it('outbound chains get no filters', () => {
      const push = pushOf(all);
      expect(new AuthzHttpFilterContributor().httpFilters(chain(push, 'outbound'))).to.deep.equal([]);
      expect(new AuthzNetworkFilterContributor().networkFilters(chain(push, 'outbound', TCP_PORT))).to.deep.equal({});
    });
  });

  describe('dry run (annotation mesh.io/dry-run)', () => {
    it('"true" puts the policy\'s rules in shadow_rules only, with the stat prefix of their action', () => {
      const yaml = policy('foo', 'try-allow', allowPath('/a'), { 'mesh.io/dry-run': 'true' }) + policy('foo', 'try-deny', `  action: DENY\n${allowPath('/b')}`, { 'mesh.io/dry-run': 'true' });
      expect(summary(httpFilters(yaml))).to.deep.equal([
        { action: undefined, rules: [], shadow: ['ns[foo]-policy[try-deny]-rule[0]'], shadowAction: 'DENY', prefix: 'mesh_dry_run_deny_' },
        { action: undefined, rules: [], shadow: ['ns[foo]-policy[try-allow]-rule[0]'], shadowAction: 'ALLOW', prefix: 'mesh_dry_run_allow_' },
      ]);
    });

    it('enforced and dry-run policies of one action share the filter: rules and shadow_rules', () => {
      const yaml = policy('foo', 'enforced', allowPath('/a')) + policy('foo', 'trial', allowPath('/b'), { 'mesh.io/dry-run': 'True' });
      expect(summary(httpFilters(yaml))).to.deep.equal([
        { action: 'ALLOW', rules: ['ns[foo]-policy[enforced]-rule[0]'], shadow: ['ns[foo]-policy[trial]-rule[0]'], shadowAction: 'ALLOW', prefix: 'mesh_dry_run_allow_' },
      ]);
    });

    it('an AUDIT dry run has no stat prefix; without shadow rules every filter names the allow prefix', () => {
      const yaml = policy('foo', 'trial-audit', `  action: AUDIT\n${allowPath('/a')}`, { 'mesh.io/dry-run': '1' }) + policy('foo', 'deny', `  action: DENY\n${allowPath('/b')}`);
      expect(summary(httpFilters(yaml)).map((f) => [f.shadowAction, f.prefix])).to.deep.equal([
        ['LOG', undefined],
        [undefined, 'mesh_dry_run_allow_'],
      ]);
    });

    it('a value that is not a boolean is logged and the policy enforced', () => {
      const log = recordingLog();
      const filters = httpFilters(policy('foo', 'typo', allowPath('/a'), { 'mesh.io/dry-run': 'yes' }), { log });
      expect(summary(filters)[0].rules).to.deep.equal(['ns[foo]-policy[typo]-rule[0]']);
      expect(log.errors).to.deep.equal(['failed to parse the value of mesh.io/dry-run on foo/typo: "yes" is not a boolean']);
    });
  });

  describe('CUSTOM (no extension providers are configured)', () => {
    it('fails closed: the rules deny, first in the chain, and the unknown provider is logged', () => {
      const log = recordingLog();
      const yaml =
        policy('foo', 'ext', '  action: CUSTOM\n  provider: { name: my-authz }\n  rules: [{ to: [{ operation: { paths: ["/admin"] } }] }]') +
        policy('foo', 'ext-trial', '  action: CUSTOM\n  provider: { name: my-authz }\n  rules: [{ to: [{ operation: { paths: ["/trial"] } }] }]', { 'mesh.io/dry-run': 'true' }) +
        policy('foo', 'allow', allowPath('/a'));
      const filters = asJson(httpFilters(yaml, { log }));
      expect(filters.map((f) => f.typedConfig.rules.action ?? 'ALLOW')).to.deep.equal(['DENY', 'ALLOW']);
      expect(filters[0].typedConfig).to.deep.equal({
        '@type': 'type.googleapis.com/envoy.extensions.filters.http.rbac.v3.RBAC',
        rules: {
          action: 'DENY',
          policies: {
            'mesh-ext-authz-my-authz-ns[foo]-policy[ext]-rule[0]-deny-due-to-bad-CUSTOM-action': {
              permissions: [{ andRules: { rules: [{ orRules: { rules: [{ urlPath: { path: { exact: '/admin' } } }] } }] } }],
              principals: [{ andIds: { ids: [{ any: true }] } }],
            },
          },
        },
      });
      expect(log.errors).to.deep.equal([
        'failed to process CUSTOM action for provider my-authz, will generate deny configs: available providers are [] but found "my-authz"',
      ]);
    });
  });

  describe('TCP chains', () => {
    const trust = new TrustDomainBundle('cluster.local');
    const resource = (spec: AuthorizationPolicySpec): ConfigResource<AuthorizationPolicySpec> => ({
      apiVersion: 'security.mesh.io/v1',
      kind: 'AuthorizationPolicy',
      metadata: { name: 'p', namespace: 'foo', labels: {}, annotations: {} },
      spec,
    });

    it('an ALLOW rule using an HTTP-only field is dropped (it would allow more than asked); a DENY rule drops the field', () => {
      const rules = [{ to: [{ operation: { methods: ['GET'], ports: ['80'] } }] }];
      const allow = buildAuthzFilters([resource({ rules })], { trustDomains: trust, chain: 'tcp' });
      const deny = buildAuthzFilters([resource({ action: 'DENY', rules })], { trustDomains: trust, chain: 'tcp' });
      expect((allow[0].typed_config.rules as Obj).policies).to.deep.equal({});
      expect((deny[0].typed_config.rules as Obj).policies['ns[foo]-policy[p]-rule[0]'].permissions).to.deep.equal([
        { and_rules: { rules: [{ or_rules: { rules: [{ destination_port: 80 }] } }] } },
      ]);
    });

    it('a rule that cannot be read (unknown condition key) is skipped with an error, whatever the action', () => {
      const log = recordingLog();
      const filters = buildAuthzFilters([resource({ rules: [{ when: [{ key: 'request.bogus', values: ['x'] }] }, {}] })], { trustDomains: trust, chain: 'http', log });
      expect(Object.keys((filters[0].typed_config.rules as Obj).policies)).to.deep.equal(['ns[foo]-policy[p]-rule[1]']);
      expect(log.errors).to.deep.equal(['skipped invalid rule ns[foo]-policy[p]-rule[0]: unknown attribute request.bogus']);
    });
  });

  describe('trust domain', () => {
    const yaml = policy('foo', 'peers', '  rules: [{ from: [{ source: { principals: ["cluster.local/ns/a/sa/b", "other.td/ns/a/sa/c", "*/ns/a/sa/d"] } }] }]');
    const principalNames = (filters: object[]) =>
      asJson(filters)[0].typedConfig.rules.policies['ns[foo]-policy[peers]-rule[0]'].principals[0].andIds.ids[0].orIds.ids.map((id: Obj) => id.authenticated.principalName);

    it('cluster.local in a principal means the mesh\'s trust domain and each of its aliases', () => {
      expect(principalNames(httpFilters(yaml, { trustDomain: 'example.org', trustDomainAliases: ['old.example.org'] }))).to.deep.equal([
        { exact: 'spiffe://example.org/ns/a/sa/b' },
        { exact: 'spiffe://old.example.org/ns/a/sa/b' },
        { exact: 'spiffe://other.td/ns/a/sa/c' },
        { safeRegex: { regex: 'spiffe://.*/ns/a/sa/d' } },
      ]);
    });

    it('with the default trust domain, principals stay as written', () => {
      expect(principalNames(httpFilters(yaml))).to.deep.equal([
        { exact: 'spiffe://cluster.local/ns/a/sa/b' },
        { exact: 'spiffe://other.td/ns/a/sa/c' },
        { safeRegex: { regex: 'spiffe://.*/ns/a/sa/d' } },
      ]);
    });
  });

  describe('per-push sharing', () => {
    const yaml = policy('foo', 'a', allowPath('/a'));

    it('chains of workloads with the same namespace and labels share one build; other labels get their own', () => {
      const push = pushOf(yaml);
      const contributor = new AuthzHttpFilterContributor();
      const first = contributor.httpFilters(chain(push, 'inbound', HTTP_PORT));
      const samePeer = contributor.httpFilters(chain(push, 'inbound', { ...HTTP_PORT, number: 8001 }, proxyOf('10.0.0.2', 'foo', { version: 'v1', app: 'httpbin' })));
      const otherLabels = contributor.httpFilters(chain(push, 'inbound', HTTP_PORT, proxyOf('10.0.0.3', 'foo', { app: 'httpbin' })));
      expect(samePeer[0]).to.equal(first[0]);
      expect(otherLabels[0]).to.not.equal(first[0]);
      expect(otherLabels).to.deep.equal(first);
      expect(contributor.httpFilters(chain(pushOf(yaml, '2')))[0]).to.not.equal(first[0]);
    });

    it('shared filters cannot be changed by a later step', () => {
      const [filter] = new AuthzHttpFilterContributor().httpFilters(chain(pushOf(yaml)));
      expect(() => {
        (filter.typed_config as Obj).rules = {};
      }).to.throw(TypeError);
    });
  });

  describe('in the sidecar\'s listeners', () => {
    const CONFIG = `
${workloadServiceYaml({ namespace: 'foo', name: 'httpbin', address: '127.0.0.10', ports: ['{ number: 8000, name: http, protocol: HTTP, targetPort: 8080 }', '{ number: 9000, name: tcp, protocol: TCP, targetPort: 9001 }'] })}
${policy('foo', 'templated', '  rules: [{ to: [{ operation: { paths: ["/api/{*}/items/{**}"], ports: ["8000"] } }], from: [{ source: { requestPrincipals: ["https://issuer.example/*"] } }] }]')}
${policy('foo', 'no-admin', '  action: DENY\n  rules: [{ to: [{ operation: { paths: ["/admin*"] } }] }]')}`;
    const contributors = { httpFilters: [new AuthzHttpFilterContributor()], networkFilters: [new AuthzNetworkFilterContributor()] };

    it('encode as valid Envoy listeners: RBAC before the router and before tcp_proxy, inbound only', () => {
      const proxy = proxyOf('127.0.0.10', 'foo', { app: 'httpbin', version: 'v1' }, { INTERCEPTION_MODE: 'REDIRECT' });
      const lds = { listeners: listenersOf(new SidecarGenerator(contributors), pushOf(CONFIG), proxy) as Record<string, Obj> };
      const hcm = inboundFilters(lds, 8000)[0].typed_config;
      expect(hcm.http_filters.map((f: Obj) => f.name)).to.deep.equal(['envoy.filters.http.rbac', 'envoy.filters.http.rbac', 'envoy.filters.http.router']);
      const [deny, allow] = hcm.http_filters.map((f: Obj) => f.typed_config);
      expect(deny.rules.action).to.equal('DENY');
      const allowRule = allow.rules.policies['ns[foo]-policy[templated]-rule[0]'];
      // The uri_template extension survives the wire as its own typed config.
      expect(allowRule.permissions[0].and_rules.rules[0].or_rules.rules[0].uri_template).to.deep.equal({
        name: 'uri-template',
        typed_config: { '@type': 'type.googleapis.com/envoy.extensions.path.match.uri_template.v3.UriTemplateMatchConfig', path_template: '/api/*/items/**' },
      });
      expect(allowRule.principals[0].and_ids.ids[0].and_ids.ids.map((id: Obj) => [id.metadata.path.map((p: Obj) => p.key), id.metadata.value.string_match])).to.deep.equal([
        [['payload', 'iss'], { exact: 'https://issuer.example' }],
        [['payload', 'sub'], { safe_regex: { regex: '.+' } }],
      ]);
      const tcp = inboundFilters(lds, 9000);
      expect(tcp.map((f: Obj) => f.name)).to.deep.equal(['envoy.filters.network.rbac', 'envoy.filters.network.rbac', 'envoy.filters.network.tcp_proxy']);
      // On TCP the DENY rule loses its path (so it denies every connection); the ALLOW rule needs a JWT, so it is dropped.
      expect(tcp[0].typed_config.rules.policies['ns[foo]-policy[no-admin]-rule[0]'].permissions).to.deep.equal([{ and_rules: { rules: [{ any: true }] } }]);
      expect(tcp[1].typed_config.rules).to.deep.equal({ action: 'ALLOW' });
      expect(outboundFilters(lds, 8000)[0].typed_config.http_filters.map((f: Obj) => f.name)).to.not.include('envoy.filters.http.rbac');
    });

    it('each filter decodes alone as the RBAC message of its type', () => {
      const [filter] = httpFilters(CONFIG);
      const type = `type.googleapis.com/${HTTP_FILTER_TYPE}`;
      const decoded = decodeMessage(type, encodeMessage(type, filter));
      expect((decoded.typed_config as Obj)['@type']).to.equal('type.googleapis.com/envoy.extensions.filters.http.rbac.v3.RBAC');
      expect(Object.keys((decoded.typed_config as Obj).rules.policies)).to.deep.equal(['ns[foo]-policy[no-admin]-rule[0]']);
    });
  });
});

/**
 * The built-in proxy's `/config_dump` in Envoy's layout (snake_case fields, `@type` on each
 * section and resource): bootstrap (the node), clusters, listeners, routes, secrets (private keys
 * redacted, as Envoy does), and the endpoints only with `include_eds`. `mask=<f1>,<f2>` keeps
 * just those top-level fields of every section, as Envoy's field mask does.
 */
import { ConfigDumpType, SECRET_TYPE } from '../../envoy/well-known';
import { TypeUrl } from '../../envoy/type-urls';
import type { BuiltInProxyView } from '../../proxy/builtin-proxy';
import { AdminHandler, AdminResponse, json, text } from './handlers';

type Section = Record<string, unknown> & { '@type': string };

/** Envoy shows `[redacted]` in place of private keys. */
const REDACTED = Buffer.from('[redacted]').toString('base64');

export function configDumpHandler(proxy: BuiltInProxyView, userAgentVersion: string): AdminHandler {
  return {
    path: '/config_dump',
    help: 'dump current Envoy configs (experimental)',
    mutates: false,
    params: [
      { id: 'mask', help: 'The mask to apply: the fields of each section to keep, comma separated' },
      { id: 'include_eds', help: 'Dump currently loaded configuration including EDS' },
    ],
    handle: ({ url }): AdminResponse => {
      for (const unsupported of ['resource', 'name_regex']) {
        if (url.searchParams.has(unsupported)) return text(400, `${unsupported} is not supported by the built-in proxy's /config_dump; use mask or include_eds\n`);
      }
      const includeEds = ['true', '1', 'yes'].includes(url.searchParams.get('include_eds') ?? '');
      let sections = configSections(proxy, userAgentVersion, includeEds);
      const mask = url.searchParams.get('mask');
      if (mask) sections = sections.map((s) => applyMask(s, mask.split(',').map((f) => f.trim()).filter(Boolean)));
      return json({ configs: sections });
    },
  };
}

function configSections(proxy: BuiltInProxyView, userAgentVersion: string, includeEds: boolean): Section[] {
  const c = proxy.config();
  const sections: Section[] = [
    { '@type': ConfigDumpType.Bootstrap, bootstrap: bootstrapOf(proxy, userAgentVersion) },
    { '@type': ConfigDumpType.Clusters, dynamic_active_clusters: [...c.clusters.values()].map((cluster) => ({ cluster: { '@type': TypeUrl.Cluster, ...cluster } })) },
    {
      '@type': ConfigDumpType.Listeners,
      dynamic_listeners: [...c.listeners].map(([name, listener]) => ({ name, active_state: { listener: { '@type': TypeUrl.Listener, ...listener } } })),
    },
    { '@type': ConfigDumpType.Routes, dynamic_route_configs: [...c.routes.values()].map((r) => ({ route_config: { '@type': TypeUrl.RouteConfiguration, ...r } })) },
    { '@type': ConfigDumpType.Secrets, dynamic_active_secrets: secretsOf(proxy) },
  ];
  if (includeEds) {
    sections.push({
      '@type': ConfigDumpType.Endpoints,
      dynamic_endpoint_configs: [...c.endpoints.values()].map((e) => ({ endpoint_config: { '@type': TypeUrl.ClusterLoadAssignment, ...e } })),
    });
  }
  return sections;
}

function bootstrapOf(proxy: BuiltInProxyView, userAgentVersion: string): Record<string, unknown> {
  const node = proxy.node();
  return {
    node: node ? { id: node.id, cluster: node.cluster, metadata: node.metadata, user_agent_name: 'mesh-builtin-proxy', user_agent_version: userAgentVersion } : {},
  };
}

/** The SDS secrets the proxy holds, in Envoy's dump form; keys are never shown. */
function secretsOf(proxy: BuiltInProxyView): unknown[] {
  return proxy.secretCertificates().map((s) => {
    const name = s.name;
    const b64 = (pem: string) => Buffer.from(pem).toString('base64');
    const secret: Record<string, unknown> = { '@type': SECRET_TYPE, name };
    if (s.certChainPem !== undefined) secret.tls_certificate = { certificate_chain: { inline_bytes: b64(s.certChainPem) }, private_key: { inline_bytes: REDACTED } };
    if (s.trustedCaPem !== undefined) secret.validation_context = { trusted_ca: { inline_bytes: b64(s.trustedCaPem) } };
    return { name, secret };
  });
}

/** The section with only the masked top-level fields (and its `@type`). */
function applyMask(section: Section, fields: string[]): Section {
  const out: Section = { '@type': section['@type'] };
  for (const f of fields) if (f in section) out[f] = section[f];
  return out;
}

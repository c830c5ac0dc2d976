/**
 * The name table of one proxy (NDS, the incumbent's NameTable): every service the proxy can
 * reach with the addresses the agent's DNS proxy answers for it.
 */
import { isIP } from 'node:net';
import { Proxy } from '../../model/proxy';
import { PushContext } from '../../model/push-context';
import { Service } from '../../registry/model';
import { sidecarScope } from '../sidecar/scope';
import { answersWithEndpoints } from '../../model/nds-eligibility';
import { NameInfo, NameTable } from '../../envoy/name-table';

export type { NameInfo, NameTable };

/**
 * Builds the table: a service with virtual IPs answers with them (CIDRs are not answers and
 * are left out; a service with only CIDRs is not in the table); a headless or STATIC service
 * without one answers with its endpoints' IPs on the proxy's network (those of its first
 * port, as the incumbent); anything else is left to the real DNS. Hosts in the cluster domain
 * (`<name>.<ns>.svc.<domain>`) also answer as `<name>.<ns>`, `<name>.<ns>.svc`, and `<name>`
 * from their own namespace.
 */
export function buildNameTable(push: PushContext, proxy: Proxy): NameTable {
  const table: Record<string, NameInfo> = {};
  for (const service of [...servicesOf(push, proxy)].sort((a, b) => (a.hostname < b.hostname ? -1 : a.hostname > b.hostname ? 1 : 0))) {
    const ips = addressesOf(push, proxy, service);
    if (ips.length === 0) continue;
    const info: NameInfo = { ips, registry: registryOf(service), shortname: '', namespace: '', alt_hosts: [] };
    const short = clusterShortName(service.hostname, push.options.domain);
    if (short) {
      info.shortname = short.name;
      info.namespace = short.namespace;
      info.alt_hosts = [`${short.name}.${short.namespace}`, `${short.name}.${short.namespace}.svc`];
      if (short.namespace === proxy.namespace) info.alt_hosts.push(short.name);
    }
    table[service.hostname] = info;
  }
  return { table };
}

/** What the proxy may reach: its Sidecar scope; a gateway sees every service exported to its namespace. */
function servicesOf(push: PushContext, proxy: Proxy): readonly Service[] {
  return proxy.type === 'router' ? push.visibleServices(proxy.namespace) : sidecarScope(push, proxy).services;
}

function addressesOf(push: PushContext, proxy: Proxy, service: Service): string[] {
  if (service.addresses.length > 0) return unique(service.addresses.filter((a) => isIP(a) !== 0));
  if (!answersWithEndpoints(service) || service.ports.length === 0) return [];
  const network = proxy.metadata.NETWORK ?? '';
  return unique(
    push
      .endpoints(service.hostname, service.ports[0].number)
      // Other networks' endpoints are reached through their gateways, never by address.
      .filter((ep) => isIP(ep.address) !== 0 && (network === '' || ep.network === '' || ep.network === network))
      .map((ep) => ep.address),
  );
}

/** `<name>.<namespace>.svc.<domain>` → its name and namespace; undefined for other hosts. */
export function clusterShortName(hostname: string, domain: string): { name: string; namespace: string } | undefined {
  const suffix = `.svc.${domain}`;
  if (!hostname.endsWith(suffix)) return undefined;
  const parts = hostname.slice(0, -suffix.length).split('.');
  if (parts.length !== 2 || parts.some((p) => p === '' || p === '*')) return undefined;
  return { name: parts[0], namespace: parts[1] };
}

/** The incumbent's registry names: ServiceEntry-declared hosts are `External`. */
function registryOf(service: Service): string {
  const kind = service.source.split('/')[0];
  return kind === 'ServiceEntry' ? 'External' : kind;
}

function unique(values: string[]): string[] {
  return [...new Set(values)];
}

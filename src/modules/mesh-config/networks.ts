/**
 * Mesh networks (`--networksConfig`, the incumbent's MeshNetworks): which network each
 * endpoint is on (by the CIDR its address is in, or by the registry, i.e. cluster, it comes
 * from) and the gateways that reach each network from the others.
 */
import { BlockList, isIP } from 'node:net';
import { FieldReader, fieldPath, Mapping } from './fields';
import { documentOf } from './parse';
import { deepFreeze } from './values';

/** How a network claims endpoints: by address range, or every endpoint of a registry (cluster ID). */
export type NetworkEndpoint = { fromCidr: string } | { fromRegistry: string };

/** A gateway into the network: by address, or by the service of a registry. */
export interface NetworkGateway {
  address?: string;
  registryServiceName?: string;
  port: number;
  locality?: string;
}

export interface MeshNetwork {
  endpoints: readonly NetworkEndpoint[];
  gateways: readonly NetworkGateway[];
}

export interface MeshNetworksValues {
  readonly networks: Readonly<Record<string, MeshNetwork>>;
}

/** The incumbent's default: no networks, every endpoint on the unnamed network. */
export const DEFAULT_MESH_NETWORKS: MeshNetworksValues = deepFreeze({ networks: {} });

/** Parses a MeshNetworks document; throws MeshConfigError naming `where` and the field. */
export function parseMeshNetworks(text: string, where: string): { values: MeshNetworksValues; warnings: string[] } {
  const fields = new FieldReader(where);
  const doc = documentOf(text, where, 'a mapping (networks: {<name>: ...})');
  if (doc === undefined) return { values: DEFAULT_MESH_NETWORKS, warnings: [] };
  const networks: Record<string, MeshNetwork> = {};
  const map = fields.mapping(doc.networks, 'networks', 'a mapping of network names to networks') ?? {};
  for (const [name, value] of Object.entries(map)) networks[name] = networkOf(value, fields, fieldPath('networks', name));
  fields.unknownFields(doc, '', new Set(['networks']));
  return { values: deepFreeze({ networks }), warnings: fields.warnings };
}

function networkOf(value: unknown, fields: FieldReader, path: string): MeshNetwork {
  const m = fields.mapping(value, path, 'a mapping (endpoints, gateways)') ?? fields.fail(path, 'must be a mapping (endpoints, gateways)');
  const endpoints = (fields.list(m.endpoints, fieldPath(path, 'endpoints')) ?? []).map((e, i) => endpointOf(e, fields, fieldPath(fieldPath(path, 'endpoints'), i)));
  if (endpoints.length === 0) fields.fail(fieldPath(path, 'endpoints'), 'must list at least one endpoint (fromCidr or fromRegistry)');
  const gateways = (fields.list(m.gateways, fieldPath(path, 'gateways')) ?? []).map((g, i) => gatewayOf(g, fields, fieldPath(fieldPath(path, 'gateways'), i)));
  fields.unknownFields(m, path, new Set(['endpoints', 'gateways']));
  return { endpoints, gateways };
}

function endpointOf(value: unknown, fields: FieldReader, path: string): NetworkEndpoint {
  const m: Mapping = fields.mapping(value, path) ?? fields.fail(path, 'must be a mapping (fromCidr or fromRegistry)');
  const cidr = fields.string(m.fromCidr, fieldPath(path, 'fromCidr'), { nonEmpty: true });
  const registry = fields.string(m.fromRegistry, fieldPath(path, 'fromRegistry'), { nonEmpty: true });
  if (cidr !== undefined && registry !== undefined) fields.fail(path, 'sets fromCidr and fromRegistry: exactly one may be set');
  fields.unknownFields(m, path, new Set(['fromCidr', 'fromRegistry']));
  if (cidr !== undefined) {
    if (!parseCidr(cidr)) fields.fail(fieldPath(path, 'fromCidr'), `${JSON.stringify(cidr)} is not a CIDR range such as 10.0.0.0/16`);
    return { fromCidr: cidr };
  }
  if (registry !== undefined) return { fromRegistry: registry };
  return fields.fail(path, 'needs fromCidr or fromRegistry');
}

function gatewayOf(value: unknown, fields: FieldReader, path: string): NetworkGateway {
  const m = fields.mapping(value, path) ?? fields.fail(path, 'must be a mapping (address or registryServiceName, port, locality)');
  const address = fields.string(m.address, fieldPath(path, 'address'), { nonEmpty: true });
  const service = fields.string(m.registryServiceName, fieldPath(path, 'registryServiceName'), { nonEmpty: true });
  if (address !== undefined && service !== undefined) fields.fail(path, 'sets address and registryServiceName: exactly one may be set');
  if (address === undefined && service === undefined) fields.fail(path, 'needs address or registryServiceName');
  const port = fields.port(m.port, fieldPath(path, 'port')) ?? fields.fail(fieldPath(path, 'port'), 'is required');
  const locality = fields.string(m.locality, fieldPath(path, 'locality'));
  fields.unknownFields(m, path, new Set(['address', 'registryServiceName', 'port', 'locality']));
  const out: NetworkGateway = address !== undefined ? { address, port } : { registryServiceName: service, port };
  if (locality) out.locality = locality;
  return out;
}

function parseCidr(text: string): { address: string; bits: number; family: 4 | 6 } | undefined {
  const m = /^([^/]+)\/(\d{1,3})$/.exec(text.trim());
  if (!m) return undefined;
  const family = isIP(m[1]);
  const bits = Number(m[2]);
  if (family === 0 || bits > (family === 4 ? 32 : 128)) return undefined;
  return { address: m[1], bits, family: family as 4 | 6 };
}

/**
 * Which network an endpoint is on, as the incumbent decides it for endpoints that do not say:
 * the first network with a `fromCidr` range holding the address, else the first with a
 * `fromRegistry` naming the endpoint's registry (cluster ID); '' when none claims it.
 */
export class NetworkAssignment {
  private readonly ranges: { network: string; list: BlockList; family: 4 | 6 }[] = [];
  private readonly registries = new Map<string, string>();

  constructor(values: MeshNetworksValues) {
    for (const name of Object.keys(values.networks).sort()) {
      for (const endpoint of values.networks[name].endpoints) {
        if ('fromCidr' in endpoint) {
          const cidr = parseCidr(endpoint.fromCidr)!;
          const list = new BlockList();
          list.addSubnet(cidr.address, cidr.bits, cidr.family === 4 ? 'ipv4' : 'ipv6');
          this.ranges.push({ network: name, list, family: cidr.family });
        } else if (!this.registries.has(endpoint.fromRegistry)) {
          this.registries.set(endpoint.fromRegistry, name);
        }
      }
    }
  }

  /** True when no network is configured (every endpoint stays on the unnamed network). */
  get empty(): boolean {
    return this.ranges.length === 0 && this.registries.size === 0;
  }

  networkOf(address: string, registry: string): string {
    const family = isIP(address);
    if (family !== 0) {
      const hit = this.ranges.find((r) => r.family === family && r.list.check(address, family === 4 ? 'ipv4' : 'ipv6'));
      if (hit) return hit.network;
    }
    return this.registries.get(registry) ?? '';
  }
}

/**
 * Who gets a name table and which services' entries follow their endpoints: shared by the
 * NDS generator and the push plan, so both agree on when the table can change.
 */
import { Proxy } from './proxy';
import { Service } from '../registry/model';

/** Go's boolean spellings, as the agent's MESH_META_* values are written. */
function metadataTrue(value: string | undefined): boolean {
  return value !== undefined && ['1', 't', 'true'].includes(value.trim().toLowerCase());
}

/**
 * A proxy gets a name table only when its agent runs the DNS proxy: node metadata
 * DNS_CAPTURE (MESH_META_DNS_CAPTURE) or ENABLE_DNS_SERVER (MESH_META_ENABLE_DNS_SERVER).
 */
export function wantsNameTable(proxy: Pick<Proxy, 'metadata'>): boolean {
  return metadataTrue(proxy.metadata.DNS_CAPTURE) || metadataTrue(proxy.metadata.ENABLE_DNS_SERVER);
}

/**
 * A service without a virtual IP whose name answers with its endpoints' IPs: headless
 * (`resolution: NONE`) or `resolution: STATIC`. DNS-resolved services without one are left
 * to the real DNS.
 */
export function answersWithEndpoints(service: Pick<Service, 'addresses' | 'resolution'>): boolean {
  return service.addresses.length === 0 && (service.resolution === 'NONE' || service.resolution === 'STATIC');
}

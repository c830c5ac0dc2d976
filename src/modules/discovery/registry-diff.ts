import { ChangeSet } from '../model/generator';
import { ServiceRegistrySnapshot } from '../registry/build';
import { ServiceEndpoint } from '../registry/model';
import { clientTlsFacts } from '../security/mtls';

/**
 * What moved between two registry snapshots: hosts whose service definition changed (or
 * appeared or went away), hosts whose endpoints changed, and the workload addresses that
 * joined or left those endpoints or whose own endpoints there changed.
 */
export function diffRegistries(before: ServiceRegistrySnapshot, after: ServiceRegistrySnapshot): Pick<ChangeSet, 'services' | 'endpoints' | 'workloadAddresses'> {
  const services = new Set<string>();
  const endpoints = new Set<string>();
  const workloadAddresses = new Set<string>();
  const hosts = new Set([...before.services.keys(), ...after.services.keys()]);
  for (const host of hosts) {
    const a = before.services.get(host);
    const b = after.services.get(host);
    // A platform registry hands over the same objects for an unchanged host: no need to compare them.
    if (!a || !b || (a !== b && JSON.stringify(a) !== JSON.stringify(b))) services.add(host);
    const ea = before.endpoints.get(host);
    const eb = after.endpoints.get(host);
    if (ea !== undefined && ea === eb) continue;
    if (JSON.stringify(ea ? [...ea] : []) !== JSON.stringify(eb ? [...eb] : [])) {
      endpoints.add(host);
      // Clients' TLS toward the host (accepted identities, auto mTLS) follows its endpoints' service accounts and TLS modes.
      if (clientTlsFacts(all(ea)) !== clientTlsFacts(all(eb))) services.add(host);
      // The proxies at addresses that joined, left, or whose own endpoints changed (a port, a
      // label): their inbound config follows their endpoints. The other endpoints' proxies
      // keep theirs, so an endpoint push does not regenerate it.
      const byAddressA = endpointsByAddress(ea);
      const byAddressB = endpointsByAddress(eb);
      for (const [address, list] of byAddressA) if (JSON.stringify(list) !== JSON.stringify(byAddressB.get(address))) workloadAddresses.add(address);
      for (const address of byAddressB.keys()) if (!byAddressA.has(address)) workloadAddresses.add(address);
    }
  }
  return { services, endpoints, workloadAddresses };
}

/** A host's endpoints grouped by address, in port order (each list as the registry holds it). */
function endpointsByAddress(byPort: ReadonlyMap<number, readonly ServiceEndpoint[]> | undefined): Map<string, ServiceEndpoint[]> {
  const out = new Map<string, ServiceEndpoint[]>();
  for (const list of byPort?.values() ?? []) {
    for (const ep of list) {
      const at = out.get(ep.address);
      if (at) at.push(ep);
      else out.set(ep.address, [ep]);
    }
  }
  return out;
}

function all(byPort: ReadonlyMap<number, readonly ServiceEndpoint[]> | undefined): ServiceEndpoint[] {
  return [...(byPort?.values() ?? [])].flat();
}


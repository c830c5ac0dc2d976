import { ChangeSet } from '../model/generator';
import { ServiceRegistrySnapshot } from '../registry/build';
import { ServiceEndpoint } from '../registry/model';
import { clientTlsFacts } from '../security/mtls';

/**
 * What moved between two registry snapshots: hosts whose service definition changed (or
 * appeared or went away), hosts whose endpoints changed, and the workload addresses that
 * joined or left those endpoints.
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
    const addressesA = addressesOf(ea);
    const addressesB = addressesOf(eb);
    if (JSON.stringify(ea ? [...ea] : []) !== JSON.stringify(eb ? [...eb] : [])) {
      endpoints.add(host);
      // Clients' TLS toward the host (accepted identities, auto mTLS) follows its endpoints' service accounts and TLS modes.
      if (clientTlsFacts(all(ea)) !== clientTlsFacts(all(eb))) services.add(host);
      for (const x of addressesA) if (!addressesB.has(x)) workloadAddresses.add(x);
      for (const x of addressesB) if (!addressesA.has(x)) workloadAddresses.add(x);
      // An endpoint whose port or labels changed moves its own proxy's inbound config too.
      for (const x of addressesA) if (addressesB.has(x)) workloadAddresses.add(x);
    }
  }
  return { services, endpoints, workloadAddresses };
}

function all(byPort: ReadonlyMap<number, readonly ServiceEndpoint[]> | undefined): ServiceEndpoint[] {
  return [...(byPort?.values() ?? [])].flat();
}

function addressesOf(byPort: ReadonlyMap<number, readonly { address: string }[]> | undefined): Set<string> {
  const out = new Set<string>();
  for (const list of byPort?.values() ?? []) for (const ep of list) out.add(ep.address);
  return out;
}

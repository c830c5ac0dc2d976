/** Workload identities (SPIFFE IDs), and which workloads can speak mesh mutual TLS. */
import { ServiceEntrySpec } from '../../config/kinds/service-entry';
import { resourceKey } from '../../config/resource';
import { DEFAULT_MESH_CONFIG } from '../../mesh-config/values';
import { PushContext } from '../../model/push-context';
import { Service, ServiceEndpoint } from '../../registry/model';

/** The trust domain of workload identities unless the mesh config names another: the mesh config's default. */
export const DEFAULT_TRUST_DOMAIN = DEFAULT_MESH_CONFIG.trustDomain;

/** A workload label saying the workload has a proxy that terminates mesh mTLS (the incumbent's `security.istio.io/tlsMode`). */
export const TLS_MODE_LABEL = 'security.mesh.io/tlsMode';
/** The TLS_MODE_LABEL value of workloads that speak mesh mTLS. */
export const MESH_TLS_MODE = 'mesh';
/** The TLS_MODE_LABEL value of workloads that do not (the same as no label). */
export const DISABLED_TLS_MODE = 'disabled';

/** `spiffe://<trust domain>/ns/<namespace>/sa/<service account>`. */
export function spiffeId(trustDomain: string, namespace: string, serviceAccount: string): string {
  return `spiffe://${trustDomain}/ns/${namespace}/sa/${serviceAccount}`;
}

/** The TLS mode an endpoint's labels announce; `disabled` without the label. */
export function endpointTlsMode(labels: Readonly<Record<string, string>>): string {
  const value = labels[TLS_MODE_LABEL];
  return value === undefined || value === '' ? DISABLED_TLS_MODE : value;
}

/**
 * The identities a client may accept from the workloads of a service: the ServiceEntry's
 * `subjectAltNames`, and for a mesh-internal service the SPIFFE ID of each endpoint's service
 * account; sorted, without duplicates.
 */
export function serviceIdentities(push: PushContext, service: Service, trustDomain: string): string[] {
  return push.memoize(`mtls/identities/${trustDomain}/${service.hostname}`, () => {
    const out = new Set<string>(subjectAltNamesOf(push, service));
    if (service.location === 'MESH_INTERNAL') {
      for (const port of service.ports) {
        for (const ep of push.endpoints(service.hostname, port.number)) {
          if (ep.serviceAccount) out.add(spiffeId(trustDomain, ep.namespace, ep.serviceAccount));
        }
      }
    }
    return [...out].sort();
  });
}

/**
 * What a client's TLS settings toward a host read from its endpoints, as one comparable key:
 * their service accounts (the identities it accepts) and TLS modes (auto mTLS). When it changes,
 * the host's clusters change, not only its endpoints.
 */
export function clientTlsFacts(endpoints: Iterable<ServiceEndpoint>): string {
  const accounts = new Set<string>();
  const modes = new Set<string>();
  for (const ep of endpoints) {
    if (ep.serviceAccount) accounts.add(`${ep.namespace}/${ep.serviceAccount}`);
    modes.add(endpointTlsMode(ep.labels));
  }
  return JSON.stringify([[...accounts].sort(), [...modes].sort()]);
}

function subjectAltNamesOf(push: PushContext, service: Service): readonly string[] {
  const byKey = push.memoize('mtls/service-entries', () => new Map(push.resources<ServiceEntrySpec>('ServiceEntry').map((se) => [resourceKey(se), se])));
  return byKey.get(service.source)?.spec.subjectAltNames ?? [];
}

import { ConfigResource } from '../config/resource';
import { ServiceEntrySpec } from '../config/kinds/service-entry';

/**
 * The `Mock` service registry (`--registries Mock`): two fixed HTTP services with two
 * endpoints each, so a daemon can serve something without any config (demos, smoke tests).
 */
export function mockServiceEntries(domain: string): ConfigResource<ServiceEntrySpec>[] {
  const entry = (name: string, base: number): ConfigResource<ServiceEntrySpec> => ({
    apiVersion: 'networking.mesh.io/v1',
    kind: 'ServiceEntry',
    metadata: { name: `mock-${name}`, namespace: 'default', labels: {}, annotations: {} },
    spec: {
      hosts: [`${name}.default.svc.${domain}`],
      location: 'MESH_INTERNAL',
      resolution: 'STATIC',
      ports: [
        { name: 'http', number: 80, protocol: 'HTTP' },
        { name: 'http-alt', number: 8080, protocol: 'HTTP' },
      ],
      endpoints: [
        { address: `10.10.${base}.1`, labels: { app: name, version: 'v1' } },
        { address: `10.10.${base}.2`, labels: { app: name, version: 'v2' } },
      ],
    },
  });
  return [entry('hello', 1), entry('world', 2)];
}

import { expect } from 'chai';
import { KINDS, KindRegistry, parseConfigText } from '../../src/modules/config';
import { ServiceEntrySpec } from '../../src/modules/config/kinds/service-entry';
import { WorkloadEntrySpec } from '../../src/modules/config/kinds/workload-entry';
import { ConfigResource } from '../../src/modules/config/resource';
import { parseProxy, Proxy, PushContext } from '../../src/modules/model';
import { buildRegistry } from '../../src/modules/registry/build';
import { CachedType, XdsCache } from '../../src/modules/model/xds-cache';

/**
 * A push context from YAML documents (which must all be valid), as the daemon would build it;
 * with `cache`, one that reads and fills that xDS cache across pushes.
 */
export function pushOf(yaml: string, version = '1', cache?: XdsCache): PushContext {
  const parsed = parseConfigText('test.yaml', yaml, new KindRegistry(KINDS));
  expect(parsed.issues.map((i) => `${i.kind}/${i.name} ${i.field}: ${i.message}`)).to.deep.equal([]);
  const config = new Map<string, ConfigResource[]>();
  for (const { resource } of parsed.resources) config.set(resource.kind, [...(config.get(resource.kind) ?? []), resource]);
  const of = <S extends object>(kind: string) => (config.get(kind) ?? []) as ConfigResource<S>[];
  const registry = buildRegistry(of<ServiceEntrySpec>('ServiceEntry'), of<WorkloadEntrySpec>('WorkloadEntry'));
  return new PushContext(version, config, registry, { domain: 'cluster.local', rootNamespace: 'mesh-system' }, cache);
}

/** An xDS cache of `types` that counts its misses: what a generator had to build. */
export function missCountingCache(types: readonly CachedType[]): { cache: XdsCache; misses: () => number } {
  let misses = 0;
  const cache = new XdsCache({ maxEntries: 1000, types: new Set(types), observer: { read: (hit) => (misses += hit ? 0 : 1), evicted: () => undefined, size: () => undefined } });
  return { cache, misses: () => misses };
}

/** A proxy as a node with the given IP, namespace, labels and metadata would present itself. */
export function proxyOf(ip: string, namespace: string, labels: Record<string, string> = {}, metadata: Record<string, string> = {}): Proxy {
  return parseProxy(`sidecar~${ip}~pod.${namespace}~${namespace}.svc.cluster.local`, { NAMESPACE: namespace, LABELS: labels, ...metadata });
}

/**
 * A ServiceEntry document of one host and one port, starting with `---` so that it can follow
 * others: serviceEntryYaml('egress', 'rr', 'rr.example.com', 'DNS_ROUND_ROBIN', '{ number: 80, name: http, protocol: HTTP }').
 * `more` is further lines of its spec, each indented by two spaces.
 */
export function serviceEntryYaml(namespace: string, name: string, host: string, resolution: string, port: string, more = ''): string {
  return `
---
apiVersion: networking.mesh.io/v1
kind: ServiceEntry
metadata: { name: ${name}, namespace: ${namespace} }
spec:
  hosts: [${host}]
  resolution: ${resolution}
  ports: [${port}]${more}
`;
}

/**
 * The usual mesh of a test: service `<name>.<namespace>.svc.cluster.local` (MESH_INTERNAL,
 * STATIC) selecting `app: <name>`, and its one workload `<name>-v1` at `address` with
 * `labels` (default `app: <name>, version: v1`). `ports` are ServiceEntry port entries, e.g.
 * '{ number: 8000, name: http, protocol: HTTP, targetPort: 8080 }'.
 */
export function workloadServiceYaml(o: { namespace: string; name: string; address: string; ports: string[]; labels?: Record<string, string> }): string {
  const labels = o.labels ?? { app: o.name, version: 'v1' };
  return `
apiVersion: networking.mesh.io/v1
kind: ServiceEntry
metadata: { name: ${o.name}, namespace: ${o.namespace} }
spec:
  hosts: [${o.name}.${o.namespace}.svc.cluster.local]
  location: MESH_INTERNAL
  resolution: STATIC
  ports:
${o.ports.map((p) => `  - ${p}`).join('\n')}
  workloadSelector: { labels: { app: ${o.name} } }
---
apiVersion: networking.mesh.io/v1
kind: WorkloadEntry
metadata: { name: ${o.name}-v1, namespace: ${o.namespace} }
spec: { address: ${o.address}, labels: ${JSON.stringify(labels)} }
`;
}

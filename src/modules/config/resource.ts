/** A validated mesh resource, whatever source it came from. */
export interface ConfigResource<S extends object = object> {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace: string;
    labels: Record<string, string>;
    annotations: Record<string, string>;
  };
  spec: S;
}

/** `Kind/namespace/name`: identity of a resource across sources. */
export function resourceKey(r: Pick<ConfigResource, 'kind' | 'metadata'>): string {
  return `${r.kind}/${r.metadata.namespace}/${r.metadata.name}`;
}

/**
 * The xDS node the agent presents (DESIGN.md §1): ID `sidecar~<ip>~<pod>.<ns>~<domain>` and
 * metadata NAMESPACE, LABELS (from MESH_METAJSON_LABELS), INSTANCE_IPS, INTERCEPTION_MODE,
 * and every MESH_META_<NAME> variable as <NAME>.
 */
import type { AdsNode } from '../proxy/xds/xds-client';
import { InterceptionMode } from './proxy-config';

export interface NodeInputs {
  env: NodeJS.ProcessEnv;
  instanceIp: string;
  podName: string;
  podNamespace: string;
  /** `--domain`; empty means `<namespace>.svc.cluster.local`. */
  domain: string;
  serviceCluster: string;
  interceptionMode: InterceptionMode;
}

export class NodeIdentityError extends Error {}

export function agentNode(inputs: NodeInputs): AdsNode {
  const { env } = inputs;
  const domain = inputs.domain || `${inputs.podNamespace}.svc.cluster.local`;
  let labels: Record<string, string> = {};
  if (env.MESH_METAJSON_LABELS) {
    try {
      const parsed = JSON.parse(env.MESH_METAJSON_LABELS);
      if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not a JSON object');
      labels = Object.fromEntries(Object.entries(parsed).map(([k, v]) => [k, String(v)]));
    } catch (e) {
      throw new NodeIdentityError(`MESH_METAJSON_LABELS: must be a JSON object of labels: ${(e as Error).message}`);
    }
  }
  const metadata: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(env)) {
    if (k.startsWith('MESH_META_') && v !== undefined) metadata[k.slice('MESH_META_'.length)] = v;
  }
  Object.assign(metadata, {
    NAMESPACE: inputs.podNamespace,
    LABELS: labels,
    INSTANCE_IPS: inputs.instanceIp,
    INTERCEPTION_MODE: inputs.interceptionMode,
    NAME: inputs.podName,
  });
  return { id: `sidecar~${inputs.instanceIp}~${inputs.podName}.${inputs.podNamespace}~${domain}`, cluster: inputs.serviceCluster, metadata };
}

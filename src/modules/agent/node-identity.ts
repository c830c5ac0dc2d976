/**
 * The xDS node the agent presents (DESIGN.md §1): ID `sidecar~<ip>~<pod>.<ns>~<domain>` and
 * metadata NAMESPACE, LABELS (from MESH_METAJSON_LABELS), INSTANCE_IPS, INTERCEPTION_MODE,
 * MESH_VERSION (the agent's build, as the incumbent's ISTIO_VERSION: `proxy-status` and
 * `version --remote` show it), and every MESH_META_<NAME> variable as <NAME>, all read
 * through the agent's settings.
 */
import type { AdsNode } from '../proxy/xds/xds-client';
import { defaultValue } from '../settings/parse';
import type { Settings } from '../settings/settings';
import { UserError } from '../shared/user-error';
import { InterceptionMode } from './proxy-config';

/** What the node takes besides settings: the command's flags and the ProxyConfig. */
export interface NodeInputs {
  /** `--domain`; empty means `<namespace>.svc.cluster.local`. */
  domain: string;
  serviceCluster: string;
  interceptionMode: InterceptionMode;
  /** The agent's version, sent as MESH_VERSION unless MESH_META_MESH_VERSION says otherwise. */
  meshVersion?: string;
}

export class NodeIdentityError extends UserError {}

function agentDefault(settings: Settings, name: 'POD_NAME' | 'POD_NAMESPACE'): string {
  return String(defaultValue(settings.resolve(name).definition, settings.program));
}

export function agentNode(settings: Settings, inputs: NodeInputs): AdsNode {
  const instanceIp = settings.string('INSTANCE_IP');
  if (!instanceIp) throw new NodeIdentityError('INSTANCE_IP is not set: the agent needs the workload address its listeners bind and the daemon knows it by');
  // POD_NAME and POD_NAMESPACE are the orchestrator's downward-API variables (defaults `workload`,
  // `default`); set but empty counts as unset, since the node ID needs both.
  const podName = settings.string('POD_NAME') || agentDefault(settings, 'POD_NAME');
  const podNamespace = settings.string('POD_NAMESPACE') || agentDefault(settings, 'POD_NAMESPACE');
  const domain = inputs.domain || `${podNamespace}.svc.cluster.local`;
  const labelsJson = settings.string('MESH_METAJSON_LABELS');
  let labels: Record<string, string> = {};
  if (labelsJson) {
    try {
      const parsed = JSON.parse(labelsJson);
      if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not a JSON object');
      labels = Object.fromEntries(Object.entries(parsed).map(([k, v]) => [k, String(v)]));
    } catch (e) {
      throw new NodeIdentityError(`MESH_METAJSON_LABELS: must be a JSON object of labels: ${(e as Error).message}`);
    }
  }
  const metadata: Record<string, unknown> = { ...(inputs.meshVersion ? { MESH_VERSION: inputs.meshVersion } : {}), ...settings.family('MESH_META_') };
  Object.assign(metadata, {
    NAMESPACE: podNamespace,
    LABELS: labels,
    INSTANCE_IPS: instanceIp,
    INTERCEPTION_MODE: inputs.interceptionMode,
    NAME: podName,
  });
  return { id: `sidecar~${instanceIp}~${podName}.${podNamespace}~${domain}`, cluster: inputs.serviceCluster, metadata };
}

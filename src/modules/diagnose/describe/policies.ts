/**
 * The policy section: the merged mTLS mode of the pod (and its ports) and the PeerAuthentications
 * applied, then the RequestAuthentications and the Sidecar resource in force for it (which the
 * incumbent leaves out), each listed as `name.namespace`.
 */
import { ConfigResource } from '../../config';
import { PeerAuthenticationSpec } from '../../config/kinds/peer-authentication';
import { RequestAuthenticationSpec } from '../../config/kinds/request-authentication';
import type { PushContext } from '../../model/push-context';
import { workloadMtls } from '../../security/mtls';
import { policiesFor } from '../../security/selection';
import { Lines } from './text';

export function writePolicies(out: Lines, push: PushContext, workload: { namespace: string; labels: Record<string, string> }): void {
  const merged = workloadMtls(push, workload);
  out.add('Effective PeerAuthentication:');
  out.add(`Workload mTLS mode: ${merged.mode}`, 3);
  if (merged.ports.size) {
    out.add('Port Level mTLS mode:', 3);
    for (const port of [...merged.ports.keys()].sort((a, b) => a - b)) out.add(`${port}: ${merged.ports.get(port)}`, 6);
  }
  writeApplied(out, 'PeerAuthentication', policiesFor<PeerAuthenticationSpec>(push, workload, 'PeerAuthentication'));
  writeApplied(out, 'RequestAuthentication', policiesFor<RequestAuthenticationSpec>(push, workload, 'RequestAuthentication'));
  const sidecar = push.sidecarFor(workload);
  writeApplied(out, 'Sidecar', sidecar ? [sidecar] : []);
}

/** `Applied <Kind>:` and the resources' `name.namespace`, when there are any. */
function writeApplied(out: Lines, kind: string, resources: readonly ConfigResource[]): void {
  if (!resources.length) return;
  out.add(`Applied ${kind}:`);
  out.add(resources.map((r) => `${r.metadata.name}.${r.metadata.namespace}`).join(', '), 3);
}

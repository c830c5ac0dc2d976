/** The PeerAuthentication section: the merged mTLS mode of the pod (and its ports), and the policies applied. */
import { PeerAuthenticationSpec } from '../../config/kinds/peer-authentication';
import type { PushContext } from '../../model/push-context';
import { workloadMtls } from '../../security/mtls';
import { policiesFor } from '../../security/selection';
import { Lines } from './text';

export function writePeerAuthentication(out: Lines, push: PushContext, workload: { namespace: string; labels: Record<string, string> }): void {
  const merged = workloadMtls(push, workload);
  out.add('Effective PeerAuthentication:');
  out.add(`Workload mTLS mode: ${merged.mode}`, 3);
  if (merged.ports.size) {
    out.add('Port Level mTLS mode:', 3);
    for (const port of [...merged.ports.keys()].sort((a, b) => a - b)) out.add(`${port}: ${merged.ports.get(port)}`, 6);
  }
  const applied = policiesFor<PeerAuthenticationSpec>(push, workload, 'PeerAuthentication');
  if (applied.length) {
    out.add('Applied PeerAuthentication:');
    out.add(applied.map((p) => `${p.metadata.name}.${p.metadata.namespace}`).join(', '), 3);
  }
}

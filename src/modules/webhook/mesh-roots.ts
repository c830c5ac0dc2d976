import { REVISION_LABEL } from '../model/mesh-labels';
export { REVISION_LABEL };
/**
 * The daemon's trust roots as the trust plumbing needs them (bound by the daemon, which owns
 * the CA): what workloads trust, what verifies the webhooks' HTTPS certificate, and when they
 * change (root rotation).
 */
export const MeshRootsToken = Symbol.for('mesh.MeshRoots');
export interface MeshRoots {
  /** The mesh roots (PEM), published to every namespace; empty when the daemon has none. */
  meshRootsPem(): string;
  /** The roots (PEM) verifying the HTTPS address's certificate: the webhooks' caBundle; empty when none. */
  servingRootsPem(): string;
  /** Called after the roots change; returns the unsubscribe. */
  onChange(listener: () => void): () => void;
}

/** The label the mesh's webhook configurations and resources carry to name their control plane revision. */

/** The control plane revision (REVISION), `default` when unset, as the incumbent. */
export function revisionName(setting: string | undefined): string {
  return setting && setting !== '' ? setting : 'default';
}

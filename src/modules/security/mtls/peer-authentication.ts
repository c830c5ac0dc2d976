/**
 * PeerAuthentication → the mutual TLS mode a workload's proxy (or proxyless gRPC server) accepts
 * on each of its ports, and the best guess a client can make of it for a service.
 */
import { MtlsMode, PeerAuthenticationSpec, PeerMtls } from '../../config/kinds/peer-authentication';
import { ConfigResource } from '../../config/resource';
import { Proxy } from '../../model/proxy';
import { PushContext } from '../../model/push-context';
import { policiesFor } from '../selection';

/** What a workload port accepts: mutual TLS only, both mutual TLS and plain text, or plain text only. */
export type EffectiveMtlsMode = Exclude<MtlsMode, 'UNSET'>;

/** The mode when no policy says otherwise (the incumbent's). */
export const DEFAULT_MTLS_MODE: EffectiveMtlsMode = 'PERMISSIVE';

/** A workload's merged PeerAuthentication: its mode, and the modes of the ports a workload-level policy names. */
export interface WorkloadMtls {
  mode: EffectiveMtlsMode;
  /** Workload (target) port → mode; ports not listed take `mode`. */
  ports: ReadonlyMap<number, EffectiveMtlsMode>;
}

type Workload = Pick<Proxy, 'namespace' | 'labels'>;
type Policy = ConfigResource<PeerAuthenticationSpec>;

/**
 * The merged PeerAuthentication of a workload, the incumbent's way: the mesh-level policy (root
 * namespace, no selector), then the namespace-level one (no selector), then the workload-level
 * one (a selector matching the workload's labels, outside the root namespace) each override the
 * mode unless they leave it UNSET; the workload-level policy's `portLevelMtls` then sets single
 * ports (UNSET there means the workload's mode). When several policies compete for one level, the
 * oldest wins; config files carry no creation time, so that is the first by name.
 */
export function workloadMtls(push: PushContext, workload: Workload): WorkloadMtls {
  const labels = JSON.stringify(Object.keys(workload.labels).sort().map((k) => [k, workload.labels[k]]));
  return push.memoize(`mtls/peer/${workload.namespace}/${labels}`, () => mergePolicies(push, workload));
}

/** The mode of one workload port (the port the workload itself listens on, as `portLevelMtls` keys are). */
export function workloadPortMtlsMode(push: PushContext, workload: Workload, targetPort: number): EffectiveMtlsMode {
  const merged = workloadMtls(push, workload);
  return merged.ports.get(targetPort) ?? merged.mode;
}

/**
 * The mode a client assumes for the workloads of a namespace: the namespace-level policy over the
 * mesh-level one, PERMISSIVE without either. Workload- and port-level policies are left out (a
 * client cannot tell which workloads are behind a service without its endpoints), as the
 * incumbent's auto mTLS does.
 */
export function namespaceMtlsMode(push: PushContext, namespace: string): EffectiveMtlsMode {
  return push.memoize(`mtls/peer-ns/${namespace}`, () => {
    const { mesh, namespace: ns } = byLevel(push, { namespace, labels: {} });
    return inherit(inherit(DEFAULT_MTLS_MODE, mesh?.spec.mtls), ns?.spec.mtls);
  });
}

function mergePolicies(push: PushContext, workload: Workload): WorkloadMtls {
  const { mesh, namespace, workload: own } = byLevel(push, workload);
  let mode = inherit(DEFAULT_MTLS_MODE, mesh?.spec.mtls);
  mode = inherit(mode, namespace?.spec.mtls);
  mode = inherit(mode, own?.spec.mtls);
  const ports = new Map<number, EffectiveMtlsMode>();
  for (const [port, mtls] of Object.entries(own?.spec.portLevelMtls ?? {})) ports.set(Number(port), inherit(mode, mtls));
  return { mode, ports };
}

/** The one policy in force at each level (the first of its level in policy order). */
function byLevel(push: PushContext, workload: Workload): { mesh?: Policy; namespace?: Policy; workload?: Policy } {
  const root = push.options.rootNamespace;
  const out: { mesh?: Policy; namespace?: Policy; workload?: Policy } = {};
  // Root namespace first, then by name: the first policy of each level is the one that counts.
  for (const policy of policiesFor<PeerAuthenticationSpec>(push, workload, 'PeerAuthentication')) {
    const selects = Object.keys(policy.spec.selector?.matchLabels ?? {}).length > 0;
    const inRoot = policy.metadata.namespace === root;
    if (!selects && inRoot) out.mesh ??= policy;
    else if (!selects) out.namespace ??= policy;
    // A selector in the root namespace selects nothing (the incumbent ignores such policies).
    else if (!inRoot) out.workload ??= policy;
  }
  return out;
}

function inherit(parent: EffectiveMtlsMode, mtls: PeerMtls | undefined): EffectiveMtlsMode {
  const mode = mtls?.mode;
  return mode === undefined || mode === 'UNSET' ? parent : mode;
}

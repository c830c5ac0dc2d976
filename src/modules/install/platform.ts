import { isTree, OperatorSpec } from './operator';
import { OrchClient } from '../orch';

/**
 * What the cluster decides about an install: the platform, read from the orchestrator's
 * version string, picks where the node plugin's binaries and network config live on nodes.
 * A platform or a path set in the values always wins over what is detected.
 */

export interface CniPaths {
  binDir: string;
  confDir: string;
}

const DEFAULT_CNI_PATHS: CniPaths = { binDir: '/opt/cni/bin', confDir: '/etc/cni/net.d' };

/** Platforms whose nodes keep CNI files elsewhere; others use the defaults. */
const PLATFORM_CNI_PATHS: Record<string, Partial<CniPaths>> = {
  gke: { binDir: '/home/kubernetes/bin' },
  k3s: { binDir: '/var/lib/rancher/k3s/data/current/bin', confDir: '/var/lib/rancher/k3s/agent/etc/cni/net.d' },
};

/** The platform a version string such as `v1.30.2-gke.1000` or `v1.31.1+k3s1` names, if any. */
export function platformOfVersion(gitVersion: string): string | undefined {
  if (/-gke\./.test(gitVersion)) return 'gke';
  if (/\+k3s\d*/.test(gitVersion)) return 'k3s';
  if (/-eks-/.test(gitVersion)) return 'eks';
  return undefined;
}

/** The spec with `values.global.platform` filled from the cluster, unless the user set one. */
export function withDetectedPlatform(spec: OperatorSpec, platform: string | undefined): OperatorSpec {
  const global = isTree(spec.values.global) ? spec.values.global : {};
  if (!platform || (typeof global.platform === 'string' && global.platform !== '')) return spec;
  return { ...spec, values: { ...spec.values, global: { ...global, platform } } };
}

export function cniPaths(spec: OperatorSpec): CniPaths {
  const global = isTree(spec.values.global) ? spec.values.global : {};
  const cni = isTree(spec.values.cni) ? spec.values.cni : {};
  const platform = PLATFORM_CNI_PATHS[typeof global.platform === 'string' ? global.platform : ''] ?? {};
  const set = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);
  return {
    binDir: set(cni.cniBinDir) ?? platform.binDir ?? DEFAULT_CNI_PATHS.binDir,
    confDir: set(cni.cniConfDir) ?? platform.confDir ?? DEFAULT_CNI_PATHS.confDir,
  };
}

/** The platform of the cluster `client` reaches, from its version; undefined when it names none. */
export async function detectClusterPlatform(client: OrchClient): Promise<string | undefined> {
  // Loaded on use: rendering without a cluster should not pay for the client library.
  const { VersionApi } = await import('@kubernetes/client-node');
  const version = await client.api(VersionApi).getCode();
  return platformOfVersion(version.gitVersion);
}

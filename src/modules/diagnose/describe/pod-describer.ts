import type { V1Pod, V1Service } from '@kubernetes/client-node';
import { inject, injectable } from 'inversify';
import { KindRegistry, KindRegistryToken } from '../../config';
import { OrchClient, PODS, SERVICES } from '../../orch';
import { listObjects } from '../orch-reads';
import { describePod, describeUnmeshedPod, PodDescription } from './describe-pod';
import { INGRESS_GATEWAY_SELECTOR } from './ingress';
import { readMeshState } from './mesh-state';
import { podRevision, proxyContainer } from './pod-facts';

export interface DescribeOptions {
  /** `-n`, else the context's namespace: objects in it are named without their namespace. */
  viewerNamespace: string;
  /** `--meshNamespace`: where the mesh ConfigMap is. */
  meshNamespace: string;
  ignoreUnmeshed: boolean;
}

/** Reads what describing a pod needs from the orchestrator API, then describes it. */
@injectable()
export class PodDescriber {
  constructor(
    @inject(OrchClient) private readonly client: OrchClient,
    @inject(KindRegistryToken) private readonly kinds: KindRegistry,
  ) {}

  async describe(pod: V1Pod, options: DescribeOptions): Promise<PodDescription> {
    const namespace = pod.metadata?.namespace ?? 'default';
    // Nothing of the mesh applies to a pod without a proxy: its own lines are all there is to say.
    if (!proxyContainer(pod)) return describeUnmeshedPod(pod, options.viewerNamespace, options.ignoreUnmeshed);
    const [namespaceServices, state, gatewayPods] = await Promise.all([
      listObjects<V1Service>(this.client, SERVICES, namespace),
      readMeshState(this.client, this.kinds, { meshNamespace: options.meshNamespace, revision: podRevision(pod), fallbackNamespaces: [namespace] }),
      listObjects<V1Pod>(this.client, PODS, undefined, { labelSelector: INGRESS_GATEWAY_SELECTOR }).then((pods) => pods.filter((p) => p.status?.phase === 'Running')),
    ]);
    const gatewayNamespaces = [...new Set(gatewayPods.map((p) => p.metadata?.namespace ?? 'default'))];
    const gatewayServices = (await Promise.all(gatewayNamespaces.map((ns) => listObjects<V1Service>(this.client, SERVICES, ns)))).flat();
    return describePod({ pod, namespaceServices, mesh: state.mesh, config: state.config, gatewayPods, gatewayServices, viewerNamespace: options.viewerNamespace, ignoreUnmeshed: options.ignoreUnmeshed });
  }
}

import type { Operations } from '../operations';
import type { ResourceRegistry } from '../resources';
import type { Store } from '../store';
import type { ControllerContext } from './context';
import { EndpointSliceController } from './endpoint-slices';
import { Kubelet, type PodIpAllocator, sequentialPodIps } from './kubelet';
import { NamespaceControllers } from './namespaces';
import { WorkloadControllers } from './workloads';

/*
 * The simulated cluster behind the API server (StartOptions.simulateCluster): a node and its
 * kubelet, the Deployment/ReplicaSet, EndpointSlice, namespace and service account controllers.
 */

export type { PodIpAllocator } from './kubelet';
export { NODE_NAME, NODE_LABELS, POD_IP_ANNOTATION } from './kubelet';

export class ClusterSimulation {
  private readonly kubelet: Kubelet;
  private readonly workloads: WorkloadControllers;
  private readonly slices: EndpointSliceController;
  private readonly namespaces: NamespaceControllers;

  constructor(store: Store, registry: ResourceRegistry, ops: Operations, options: { podIpAllocator?: PodIpAllocator; podTerminationMs?: number }) {
    const ctx: ControllerContext = { store, registry, ops };
    this.kubelet = new Kubelet(ctx, options.podIpAllocator ?? sequentialPodIps(), options.podTerminationMs ?? 0);
    this.workloads = new WorkloadControllers(ctx);
    this.slices = new EndpointSliceController(ctx);
    this.namespaces = new NamespaceControllers(ctx, ops);
  }

  async start(): Promise<void> {
    await this.kubelet.start();
    this.namespaces.start();
  }

  stop(): void {
    this.kubelet.stop();
    this.workloads.stop();
    this.slices.stop();
    this.namespaces.stop();
  }
}

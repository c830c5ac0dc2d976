import { timestamp } from '../operations';
import type { Obj } from '../store';
import { type ControllerContext, typeOf } from './context';
import { WorkQueue } from './work-queue';

/*
 * A scheduler and kubelet in one: a pod without spec.nodeName is bound to the node
 * (`node-1`, with topology labels), gets a pod IP and is reported Running and Ready with
 * its containers' statuses. The IP comes from the `test.orch/pod-ip` annotation when set, else
 * from the allocator (default 10.244.0.1, 10.244.0.2, ...).
 */

export const NODE_NAME = 'node-1';
export const NODE_LABELS = {
  'kubernetes.io/hostname': NODE_NAME,
  'kubernetes.io/os': 'linux',
  'topology.kubernetes.io/region': 'region-1',
  'topology.kubernetes.io/zone': 'zone-a',
};
export const POD_IP_ANNOTATION = 'test.orch/pod-ip';

export type PodIpAllocator = (pod: Obj) => string;

export function sequentialPodIps(): PodIpAllocator {
  let n = 0;
  return () => {
    n++;
    return `10.244.${(n >> 8) & 255}.${n & 255 || 1}`;
  };
}

export class Kubelet {
  private readonly queue: WorkQueue;
  private readonly terminations = new Set<NodeJS.Timeout>();

  constructor(
    private readonly ctx: ControllerContext,
    private readonly allocate: PodIpAllocator,
    terminationMs: number,
  ) {
    this.queue = new WorkQueue((key) => this.reconcile(key));
    // Graceful deletion: the pod stays, marked (its endpoints terminating), for terminationMs; grace 0 is at once.
    if (terminationMs > 0) {
      ctx.ops.podTerminator = (pod, grace) => {
        if (!pod.spec?.nodeName || grace === 0) return false;
        const timer = setTimeout(() => {
          this.terminations.delete(timer);
          const current = ctx.store.get('/pods', pod.metadata.namespace, pod.metadata.name);
          if (current && current.metadata.uid === pod.metadata.uid) ctx.ops.finishDelete('/pods', current, 'Background');
        }, terminationMs);
        this.terminations.add(timer);
        return true;
      };
    }
    ctx.store.onChange((e) => {
      if (e.key !== '/pods' || e.type === 'DELETED') return;
      if (!e.object.status?.podIP || !e.object.spec?.nodeName) this.queue.add(`${e.object.metadata.namespace}/${e.object.metadata.name}`);
    });
  }

  async start(): Promise<void> {
    if (this.ctx.store.get('/nodes', '', NODE_NAME)) return;
    await this.ctx.ops.create(
      typeOf(this.ctx, 'v1', 'Node'),
      'v1',
      undefined,
      {
        metadata: { name: NODE_NAME, labels: NODE_LABELS },
        spec: { podCIDR: '10.244.0.0/16' },
      },
      { admission: false },
    );
    const node = this.ctx.store.get('/nodes', '', NODE_NAME) as Obj;
    const now = timestamp();
    await this.ctx.ops.update(
      typeOf(this.ctx, 'v1', 'Node'),
      'v1',
      undefined,
      NODE_NAME,
      {
        ...node,
        status: {
          addresses: [
            { type: 'InternalIP', address: '127.0.0.1' },
            { type: 'Hostname', address: NODE_NAME },
          ],
          conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status', lastHeartbeatTime: now, lastTransitionTime: now }],
          nodeInfo: { kubeletVersion: 'v1.32.0', kubeProxyVersion: 'v1.32.0', operatingSystem: 'linux', architecture: 'amd64', containerRuntimeVersion: 'containerd://1.7.0', osImage: 'test', kernelVersion: '6.0', machineID: '', systemUUID: '', bootID: '' },
          capacity: { cpu: '8', memory: '32Gi', pods: '110' },
          allocatable: { cpu: '8', memory: '32Gi', pods: '110' },
        },
      },
      { admission: false },
      'status',
    );
  }

  stop(): void {
    this.queue.stop();
    for (const timer of this.terminations) clearTimeout(timer);
    this.terminations.clear();
  }

  private async reconcile(key: string): Promise<void> {
    const [namespace, name] = key.split('/');
    const pod = this.ctx.store.get('/pods', namespace, name);
    if (!pod || pod.metadata.deletionTimestamp) return;
    if (pod.spec?.nodeName && pod.status?.podIP) return;
    const type = typeOf(this.ctx, 'v1', 'Pod');
    const now = timestamp();
    const ip = pod.status?.podIP ?? pod.metadata.annotations?.[POD_IP_ANNOTATION] ?? (pod.spec?.hostNetwork ? '127.0.0.1' : this.allocate(pod));
    const containerStatus = (c: Obj) => ({ name: c.name, image: c.image, imageID: '', containerID: `containerd://${name}-${c.name}`, ready: true, started: true, restartCount: 0, state: { running: { startedAt: now } }, lastState: {} });
    const status = {
      ...(pod.status ?? {}),
      phase: 'Running',
      hostIP: '127.0.0.1',
      hostIPs: [{ ip: '127.0.0.1' }],
      podIP: ip,
      podIPs: [{ ip }],
      startTime: now,
      conditions: [
        { type: 'PodReadyToStartContainers', status: 'True', lastProbeTime: null, lastTransitionTime: now },
        { type: 'Initialized', status: 'True', lastProbeTime: null, lastTransitionTime: now },
        { type: 'Ready', status: 'True', lastProbeTime: null, lastTransitionTime: now },
        { type: 'ContainersReady', status: 'True', lastProbeTime: null, lastTransitionTime: now },
        { type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: now },
      ],
      containerStatuses: (pod.spec?.containers ?? []).map(containerStatus),
      ...(pod.spec?.initContainers?.length ? { initContainerStatuses: pod.spec.initContainers.map((c: Obj) => ({ ...containerStatus(c), ready: true, started: false, state: { terminated: { exitCode: 0, reason: 'Completed', startedAt: now, finishedAt: now } } })) } : {}),
    };
    // Binding (spec.nodeName) is the scheduler's own write; it and the kubelet's status land as one change.
    const bound = { ...pod, spec: { ...pod.spec, nodeName: pod.spec?.nodeName ?? NODE_NAME }, status };
    if (bound.spec.nodeName !== pod.spec?.nodeName) {
      this.ctx.store.commit('MODIFIED', '/pods', bound, pod);
      return;
    }
    await this.ctx.ops.update(type, 'v1', namespace, name, bound, { admission: false }, 'status');
  }
}

import { labelSelectorMatches } from '../selectors';
import type { Obj } from '../store';
import { type ControllerContext, ownerRef, typeOf } from './context';
import { WorkQueue } from './work-queue';

/*
 * The EndpointSlice controller: for each Service with a selector, the pods it selects that
 * have an IP become endpoints (addresses, conditions ready/serving/terminating, targetRef,
 * nodeName, zone from the node's topology label) of slices labelled
 * `kubernetes.io/service-name`, with the service's ports resolved against each pod's
 * container ports (a named targetPort) and their appProtocol. Pods whose ports resolve alike
 * share a slice; at most 100 endpoints a slice. Kept up to date as pods, services and nodes change.
 */

const SLICES = 'discovery.k8s.io/endpointslices';
const SERVICE_NAME = 'kubernetes.io/service-name';
const MANAGED_BY = 'endpointslice.kubernetes.io/managed-by';
const CONTROLLER = 'endpointslice-controller.k8s.io';
const MAX_ENDPOINTS = 100;

export class EndpointSliceController {
  private readonly queue: WorkQueue;

  constructor(private readonly ctx: ControllerContext) {
    this.queue = new WorkQueue((key) => this.reconcile(key));
    ctx.store.onChange((e) => {
      const ns = e.object.metadata.namespace;
      if (e.key === '/services') this.queue.add(`${ns}/${e.object.metadata.name}`);
      else if (e.key === '/pods') {
        for (const svc of ctx.store.items('/services', ns)) {
          const selector = svc.spec?.selector;
          if (!selector) continue;
          const now = labelSelectorMatches({ matchLabels: selector }, e.object.metadata.labels ?? {});
          const before = e.previous ? labelSelectorMatches({ matchLabels: selector }, e.previous.metadata.labels ?? {}) : false;
          if (now || before) this.queue.add(`${ns}/${svc.metadata.name}`);
        }
      } else if (e.key === SLICES) {
        const service = e.object.metadata.labels?.[SERVICE_NAME];
        if (service && e.object.metadata.labels?.[MANAGED_BY] === CONTROLLER) this.queue.add(`${ns}/${service}`);
      }
    });
  }

  stop(): void {
    this.queue.stop();
  }

  private async reconcile(key: string): Promise<void> {
    const [namespace, name] = key.split('/');
    const sliceType = typeOf(this.ctx, 'discovery.k8s.io/v1', 'EndpointSlice');
    const service = this.ctx.store.get('/services', namespace, name);
    const existing = this.ctx.store.items(SLICES, namespace).filter((s) => s.metadata.labels?.[SERVICE_NAME] === name && s.metadata.labels?.[MANAGED_BY] === CONTROLLER);
    const desired = service && service.spec?.selector && !service.metadata.deletionTimestamp ? this.desiredSlices(service) : [];
    const unused = [...existing];
    for (const want of desired) {
      // Reuse a slice with the same ports first, then any spare one.
      const index = Math.max(0, unused.findIndex((s) => JSON.stringify(s.ports ?? []) === JSON.stringify(want.ports)));
      const current = unused.splice(index, 1)[0];
      if (!current) {
        await this.ctx.ops.create(
          sliceType,
          'v1',
          namespace,
          {
            metadata: { generateName: `${name}-`, namespace, labels: { ...(service?.metadata.labels ?? {}), [SERVICE_NAME]: name, [MANAGED_BY]: CONTROLLER }, ownerReferences: [ownerRef(service as Obj, 'Service', 'v1')] },
            addressType: 'IPv4',
            endpoints: want.endpoints,
            ports: want.ports,
          },
          { admission: false },
        );
      } else if (JSON.stringify(current.endpoints ?? []) !== JSON.stringify(want.endpoints) || JSON.stringify(current.ports ?? []) !== JSON.stringify(want.ports)) {
        await this.ctx.ops.update(sliceType, 'v1', namespace, current.metadata.name, { ...current, endpoints: want.endpoints, ports: want.ports }, { admission: false });
      }
    }
    for (const extra of unused) await this.ctx.ops.remove(sliceType, 'v1', namespace, extra.metadata.name, {}, { admission: false }).catch(() => undefined);
  }

  private desiredSlices(service: Obj): { endpoints: Obj[]; ports: Obj[] }[] {
    const namespace = service.metadata.namespace;
    const selector = { matchLabels: service.spec.selector };
    const pods = this.ctx.store.items('/pods', namespace).filter((p) => labelSelectorMatches(selector, p.metadata.labels ?? {}) && p.status?.podIP && p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed');
    const groups = new Map<string, { endpoints: Obj[]; ports: Obj[] }>();
    for (const pod of pods) {
      const ports = this.portsFor(service, pod);
      const signature = JSON.stringify(ports);
      let group = groups.get(signature);
      if (!group) groups.set(signature, (group = { endpoints: [], ports }));
      group.endpoints.push(this.endpointFor(pod));
    }
    const slices: { endpoints: Obj[]; ports: Obj[] }[] = [];
    for (const group of groups.values()) {
      for (let i = 0; i < group.endpoints.length; i += MAX_ENDPOINTS) slices.push({ endpoints: group.endpoints.slice(i, i + MAX_ENDPOINTS), ports: group.ports });
    }
    // A service that selects no pods still has one (empty) slice, as the real controller keeps.
    if (slices.length === 0) slices.push({ endpoints: [], ports: this.portsFor(service, undefined) });
    return slices;
  }

  private portsFor(service: Obj, pod: Obj | undefined): Obj[] {
    const out: Obj[] = [];
    for (const p of service.spec?.ports ?? []) {
      let port: number | undefined;
      const target = p.targetPort ?? p.port;
      if (typeof target === 'number') port = target;
      else if (/^\d+$/.test(String(target))) port = Number(target);
      else if (pod) {
        for (const c of [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])]) {
          const found = (c.ports ?? []).find((cp: Obj) => cp.name === target && (cp.protocol ?? 'TCP') === (p.protocol ?? 'TCP'));
          if (found) port = found.containerPort;
        }
      }
      if (port === undefined && pod) continue;
      out.push({ name: p.name ?? '', port: port ?? null, protocol: p.protocol ?? 'TCP', ...(p.appProtocol ? { appProtocol: p.appProtocol } : {}) });
    }
    return out;
  }

  private endpointFor(pod: Obj): Obj {
    const terminating = !!pod.metadata.deletionTimestamp;
    const ready = !terminating && (pod.status?.conditions ?? []).some((c: Obj) => c.type === 'Ready' && c.status === 'True');
    const serving = (pod.status?.conditions ?? []).some((c: Obj) => c.type === 'Ready' && c.status === 'True');
    const nodeName = pod.spec?.nodeName;
    const zone = nodeName ? this.ctx.store.get('/nodes', '', nodeName)?.metadata.labels?.['topology.kubernetes.io/zone'] : undefined;
    return {
      addresses: [pod.status.podIP],
      conditions: { ready, serving, terminating },
      ...(pod.spec?.hostname ? { hostname: pod.spec.hostname } : {}),
      targetRef: { kind: 'Pod', namespace: pod.metadata.namespace, name: pod.metadata.name, uid: pod.metadata.uid },
      ...(nodeName ? { nodeName } : {}),
      ...(zone ? { zone } : {}),
    };
  }
}

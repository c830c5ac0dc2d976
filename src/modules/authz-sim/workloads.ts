/**
 * The workloads a simulation names: the destination (whose proxy config is generated) and a
 * source (`--from`, for its identity and address). From the cluster they are pods, with the
 * Services that select them as the orchestrator registry would list them; from files only,
 * WorkloadEntries (the registry then comes from the files' ServiceEntries, as the daemon's
 * `--configDir` builds it).
 */
import type { V1Pod, V1Service } from '@kubernetes/client-node';
import { ConfigResource } from '../config';
import { ConfigSnapshot } from '../config/store';
import { WorkloadEntrySpec } from '../config/kinds/workload-entry';
import { servicesSelecting, SERVICE_DOMAIN } from '../diagnose/describe/describe-pod';
import { targetPodPort } from '../diagnose/describe/service-ports';
import { listObjects } from '../diagnose/orch-reads';
import { PODS, SERVICES } from '../orch';
import { OrchAccess } from '../orch-access';
import { ServiceEndpoint } from '../registry/model';
import { toPlatformService } from '../registry/orch/convert';
import { PlatformRegistrySnapshot, PlatformService } from '../registry/platform';
import { Destination, usage } from './request';

export interface Workload {
  /** `Pod foo/httpbin-1` or `WorkloadEntry foo/httpbin-v1`. */
  ref: string;
  name: string;
  namespace: string;
  labels: Record<string, string>;
  ip: string;
  serviceAccount: string;
}

export interface Workloads {
  destination(to: Destination, where: string): Promise<Workload>;
  source(from: string, namespace: string, where: string): Promise<Workload>;
  /** The orchestrator's Services selecting the workload, with its endpoints; none from files. */
  platform(workload: Workload): Promise<PlatformRegistrySnapshot | undefined>;
}

/** `<name>[.<namespace>]`. */
function splitName(target: string, namespace: string): { name: string; namespace: string } {
  const dot = target.indexOf('.');
  return dot < 0 ? { name: target, namespace } : { name: target.slice(0, dot), namespace: target.slice(dot + 1) };
}

function labelsMatch(selector: Record<string, string>, labels: Readonly<Record<string, string>>): boolean {
  return Object.entries(selector).every(([k, v]) => labels[k] === v);
}

function selectorText(labels: Record<string, string>): string {
  return Object.entries(labels).map(([k, v]) => `${k}=${v}`).join(',');
}

/** WorkloadEntries of the files. */
export class FileWorkloads implements Workloads {
  constructor(private readonly config: ConfigSnapshot, private readonly defaultNamespace: string) {}

  async destination(to: Destination, where: string): Promise<Workload> {
    const namespace = to.namespace || this.defaultNamespace;
    if (to.name) return this.named(to.name, namespace, where);
    const found = this.entries().filter((e) => e.metadata.namespace === namespace && labelsMatch(to.labels!, e.spec.labels ?? {}));
    if (found.length === 0) throw usage(`${where}: no WorkloadEntry in namespace ${namespace} has the labels ${selectorText(to.labels!)} (the config comes from files only: the destination is a WorkloadEntry)`);
    return this.workload(found[0]);
  }

  async source(from: string, namespace: string, where: string): Promise<Workload> {
    return this.named(from, namespace || this.defaultNamespace, where);
  }

  async platform(): Promise<undefined> {
    return undefined;
  }

  private named(target: string, defaultNamespace: string, where: string): Workload {
    const { name, namespace } = splitName(target, defaultNamespace);
    const entry = this.entries().find((e) => e.metadata.namespace === namespace && e.metadata.name === name);
    if (!entry) throw usage(`${where}: WorkloadEntry ${namespace}/${name} is not in the files (the config comes from files only: workloads are WorkloadEntries)`);
    return this.workload(entry);
  }

  private entries(): ConfigResource<WorkloadEntrySpec>[] {
    return (this.config.get('WorkloadEntry') ?? []) as ConfigResource<WorkloadEntrySpec>[];
  }

  private workload(e: ConfigResource<WorkloadEntrySpec>): Workload {
    if (!e.spec.address) throw usage(`WorkloadEntry ${e.metadata.namespace}/${e.metadata.name} has no address`);
    return {
      ref: `WorkloadEntry ${e.metadata.namespace}/${e.metadata.name}`,
      name: e.metadata.name,
      namespace: e.metadata.namespace,
      labels: { ...(e.spec.labels ?? {}) },
      ip: e.spec.address,
      serviceAccount: e.spec.serviceAccount || 'default',
    };
  }
}

/** Pods and Services of the cluster, through the orchestrator API. */
export class ClusterWorkloads implements Workloads {
  private readonly pods = new Map<string, V1Pod>();

  constructor(private readonly access: OrchAccess, private readonly defaultNamespace: string) {}

  async destination(to: Destination, where: string): Promise<Workload> {
    const namespace = to.namespace || this.defaultNamespace;
    if (to.name) return this.named(to.name, namespace);
    const selector = selectorText(to.labels!);
    const pods = (await listObjects<V1Pod>(this.access.client, PODS, namespace, { labelSelector: selector })).filter((p) => p.status?.podIP);
    if (pods.length === 0) throw usage(`${where}: no running pod in namespace ${namespace} has the labels ${selector}`);
    pods.sort((a, b) => ((a.metadata?.name ?? '') < (b.metadata?.name ?? '') ? -1 : 1));
    return this.workload(pods[0]);
  }

  async source(from: string, namespace: string): Promise<Workload> {
    return this.named(from, namespace || this.defaultNamespace);
  }

  async platform(workload: Workload): Promise<PlatformRegistrySnapshot> {
    const pod = this.pods.get(workload.ref)!;
    const services = await listObjects<V1Service>(this.access.client, SERVICES, workload.namespace);
    const convert = { domain: SERVICE_DOMAIN, clusterId: '', sendUnhealthyEndpoints: false, persistentSessionLabel: '' };
    const platform = new Map<string, PlatformService>();
    const endpoints = new Map<string, Map<number, ServiceEndpoint[]>>();
    for (const svc of servicesSelecting(pod, services)) {
      const ps = toPlatformService(svc, convert);
      platform.set(ps.service.hostname, ps);
      const byPort = new Map<number, ServiceEndpoint[]>();
      for (const port of svc.spec?.ports ?? []) {
        const servicePort = ps.service.ports.find((p) => p.number === port.port);
        const target = targetPodPort(pod, port);
        if (!servicePort || typeof target !== 'number') continue;
        byPort.set(servicePort.number, [{
          hostname: ps.service.hostname, servicePort, address: workload.ip, port: target, labels: workload.labels, weight: 1, locality: '',
          serviceAccount: workload.serviceAccount, namespace: workload.namespace, network: '', workload: `Pod/${workload.namespace}/${workload.name}`,
        }]);
      }
      endpoints.set(ps.service.hostname, byPort);
    }
    return { services: platform, endpoints };
  }

  private async named(target: string, namespace: string): Promise<Workload> {
    return this.workload(await this.access.resolvePod(target, namespace));
  }

  private workload(pod: V1Pod): Workload {
    const name = pod.metadata?.name ?? '';
    const namespace = pod.metadata?.namespace ?? this.defaultNamespace;
    const ip = pod.status?.podIP;
    if (!ip) throw usage(`pod ${namespace}/${name} has no IP address yet (not running)`);
    const workload: Workload = {
      ref: `Pod ${namespace}/${name}`, name, namespace, labels: { ...(pod.metadata?.labels ?? {}) }, ip, serviceAccount: pod.spec?.serviceAccountName || 'default',
    };
    this.pods.set(workload.ref, pod);
    return workload;
  }
}

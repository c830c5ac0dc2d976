/**
 * `meshctl x authz simulate`'s engine: the daemon's generators build the destination workload's
 * inbound listeners from the config (as they would for its proxy), and the built-in proxy's own
 * listener, chain and filter code evaluates each request on them in-process (ListenerProbe).
 * No second reading of the policy language: what is simulated is what the data plane runs.
 */
import { inject, injectable } from 'inversify';
import { ConfigSnapshot } from '../config/store';
import { decodeMessage } from '../envoy/protos';
import { TypeUrl } from '../envoy/type-urls';
import { SidecarGenerator } from '../generators/sidecar';
import { MeshConfig } from '../mesh-config';
import { Proxy } from '../model/proxy';
import { PushContext } from '../model/push-context';
import { BuiltInProxy, ListenerProbe } from '../proxy';
import type { Decoded } from '../proxy/xds/xds-client';
import { buildRegistry } from '../registry';
import { PlatformRegistrySnapshot } from '../registry/platform';
import { ConfigResource } from '../config';
import { ServiceEntrySpec } from '../config/kinds/service-entry';
import { WorkloadEntrySpec } from '../config/kinds/workload-entry';
import { Answer, answerOf } from './answer';
import { ClaimsSigner } from './key-sets';
import { SimRequest, usage } from './request';
import { Workload, Workloads } from './workloads';

const SERVICE_DOMAIN = 'cluster.local';
/** The client's port: any; RBAC never matches it. */
const SOURCE_PORT = 45678;
const DEFAULT_SOURCE_IP = '127.0.0.1';

export interface SimulationInputs {
  /** The resources in force, key sets already written into the RequestAuthentication rules. */
  config: ConfigSnapshot;
  workloads: Workloads;
  /** Signs `claims` requests (their issuers' key sets trust it). */
  signer?: ClaimsSigner;
}

/** One simulated request: what was sent and what the proxy did. */
export interface Simulation {
  request: SimRequest;
  destination: string;
  port: number;
  source: { principal?: string; ip: string };
  answer: Answer;
}

interface Target {
  workload: Workload;
  probe: ListenerProbe;
  ports: number[];
}

@injectable()
export class AuthzSimulator {
  constructor(
    @inject(SidecarGenerator) private readonly generator: SidecarGenerator,
    @inject(BuiltInProxy) private readonly proxy: BuiltInProxy,
    @inject(MeshConfig) private readonly mesh: MeshConfig,
  ) {}

  /** The cluster's mesh config (the `mesh` ConfigMap's text), over the defaults, as the daemon reads it. */
  useMeshConfig(text: string, where: string): void {
    const result = this.mesh.setLayer('configmap', text, where);
    if (!result.ok) throw usage(result.error);
  }

  /** Each request in turn; each destination's config is generated once. */
  async run(inputs: SimulationInputs, requests: readonly SimRequest[], where: (i: number) => string): Promise<Simulation[]> {
    const targets = new Map<string, Target>();
    try {
      const out: Simulation[] = [];
      for (const [i, request] of requests.entries()) {
        const workload = await inputs.workloads.destination(request.to, where(i));
        let target = targets.get(workload.ref);
        if (!target) {
          target = await this.target(inputs, workload);
          targets.set(workload.ref, target);
        }
        out.push(await this.simulate(inputs, target, request, where(i)));
      }
      return out;
    } finally {
      for (const t of targets.values()) t.probe.close();
    }
  }

  /** The push the daemon would build: the config, and a registry of its ServiceEntries and the orchestrator's Services. */
  private push(inputs: SimulationInputs, platform: PlatformRegistrySnapshot | undefined): PushContext {
    const mesh = this.mesh.current();
    const config = inputs.config;
    const serviceEntries = (config.get('ServiceEntry') ?? []) as ConfigResource<ServiceEntrySpec>[];
    const workloadEntries = (config.get('WorkloadEntry') ?? []) as ConfigResource<WorkloadEntrySpec>[];
    const registry = buildRegistry(serviceEntries, workloadEntries, undefined, { snapshots: platform ? [platform] : [], selectWorkloadEntries: true });
    return new PushContext('simulate', config, registry, { domain: SERVICE_DOMAIN, rootNamespace: mesh.rootNamespace, mesh });
  }

  /** The workload's inbound listeners, generated and built into a probe. */
  private async target(inputs: SimulationInputs, workload: Workload): Promise<Target> {
    const push = this.push(inputs, await inputs.workloads.platform(workload));
    const proxy: Proxy = {
      id: `sidecar~${workload.ip}~${workload.name}.${workload.namespace}~${workload.namespace}.svc.${SERVICE_DOMAIN}`,
      type: 'sidecar',
      ips: [workload.ip],
      namespace: workload.namespace,
      labels: workload.labels,
      // Listeners on the workload's address and service ports: the inbound filters are the same in every mode.
      interceptionMode: 'NONE',
      generator: '',
      clusterId: '',
      metadata: {},
    };
    const listeners = this.generator
      .generate({ proxy, push, typeUrl: TypeUrl.Listener, names: undefined })
      .map((r) => decodeMessage(TypeUrl.Listener, r.body) as Decoded)
      .filter((l) => l.address?.socket_address?.address === workload.ip);
    const ports = listeners.map((l) => Number(l.address.socket_address.port_value)).sort((a, b) => a - b);
    if (ports.length === 0) throw usage(`${workload.ref}: no Service or ServiceEntry of the mesh has it as an endpoint, so its proxy has no inbound listener to simulate`);
    let probe: ListenerProbe;
    try {
      probe = this.proxy.probe(listeners);
    } catch (err) {
      throw usage(`${workload.ref}: the built-in proxy refuses the generated config: ${(err as Error).message}`);
    }
    return { workload, probe, ports };
  }

  private async simulate(inputs: SimulationInputs, target: Target, request: SimRequest, where: string): Promise<Simulation> {
    const { workload } = target;
    const port = request.port ?? (target.ports.length === 1 ? target.ports[0] : undefined);
    if (port === undefined) throw usage(`${where}: ${workload.ref} listens on several ports (${target.ports.join(', ')}): give --port`);
    if (!target.ports.includes(port)) throw usage(`${where}: ${workload.ref} has no inbound port ${port}; its ports are ${target.ports.join(', ')}`);
    const source = await this.source(inputs, request, where);
    const headers: Record<string, string> = { ...request.headers };
    headers.host = request.host ?? headers.host ?? `${workload.name}.${workload.namespace}.svc.${SERVICE_DOMAIN}`;
    let verified = true;
    if (request.token !== undefined) headers.authorization = `Bearer ${request.token}`;
    if (request.claims) {
      const issuer = request.issuer ?? String(request.claims.iss);
      headers.authorization = `Bearer ${await inputs.signer!.sign(request.claims, issuer)}`;
      verified = false;
    }
    const result = await target.probe.evaluate(
      {
        remoteAddress: source.ip,
        remotePort: SOURCE_PORT,
        localAddress: workload.ip,
        localPort: port,
        transportProtocol: source.principal ? 'tls' : 'raw_buffer',
        ...(source.principal ? { peerPrincipal: source.principal } : {}),
      },
      { method: request.method, target: request.path, headers },
    );
    return { request, destination: workload.ref, port, source, answer: answerOf(result, { given: headers.authorization !== undefined, verified }, !source.principal) };
  }

  /** The peer identity (a mutual TLS client certificate's SPIFFE ID) and address of the request. */
  private async source(inputs: SimulationInputs, request: SimRequest, where: string): Promise<{ principal?: string; ip: string }> {
    const trustDomain = this.mesh.current().trustDomain;
    if (request.from) {
      const pod = await inputs.workloads.source(request.from, request.to.namespace ?? '', where);
      return { principal: `spiffe://${trustDomain}/ns/${pod.namespace}/sa/${pod.serviceAccount}`, ip: request.sourceIp ?? pod.ip };
    }
    const principal = request.principal ?? (request.sourceNamespace ? `spiffe://${trustDomain}/ns/${request.sourceNamespace}/sa/default` : undefined);
    return { principal, ip: request.sourceIp ?? DEFAULT_SOURCE_IP };
  }
}

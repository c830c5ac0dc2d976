import type { V1EndpointSlice, V1Node, V1Pod, V1Service } from '@kubernetes/client-node';
import { expect } from 'chai';
import { loadAssignmentOf } from '../../../src/modules/generators/common/load-assignment';
import { portProtocol } from '../../../src/modules/registry';
import { ConvertOptions, endpointsOf, localityOf, toPlatformService } from '../../../src/modules/registry/orch/convert';

const OPTIONS: ConvertOptions = { domain: 'cluster.local', clusterId: 'c1', sendUnhealthyEndpoints: false, persistentSessionLabel: 'mesh.io/persistent-session' };

function service(spec: V1Service['spec'], labels: Record<string, string> = {}, annotations: Record<string, string> = {}): V1Service {
  return { metadata: { name: 'svc', namespace: 'ns', labels, annotations }, spec };
}

const lookups = (pods: V1Pod[] = [], nodes: V1Node[] = []) => ({
  pod: (namespace: string, name: string) => pods.find((p) => p.metadata?.namespace === namespace && p.metadata?.name === name),
  podByIp: (ip: string) => pods.find((p) => p.status?.podIP === ip),
  node: (name: string) => nodes.find((n) => n.metadata?.name === name),
  defaultNetwork: 'net-1',
});

function sliceOf(endpoints: object[]): V1EndpointSlice {
  return { metadata: { name: 's', namespace: 'ns' }, addressType: 'IPv4', endpoints, ports: [{ name: 'http', port: 8080 }] } as V1EndpointSlice;
}

describe('orchestrator objects into the registry model', () => {
  it('takes a port protocol from UDP, appProtocol (with the orchestrator standard names) or the name prefix, else TCP', () => {
    const cases: Array<[object, string]> = [
      [{ name: 'http' }, 'HTTP'],
      [{ name: 'http-web' }, 'HTTP'],
      [{ name: 'HTTP2-x' }, 'HTTP2'],
      [{ name: 'https-admin' }, 'HTTPS'],
      [{ name: 'grpc' }, 'GRPC'],
      [{ name: 'grpc-web' }, 'GRPC-WEB'],
      [{ name: 'grpc-web-ui' }, 'GRPC-WEB'],
      [{ name: 'tcp-db' }, 'TCP'],
      [{ name: 'tls-x' }, 'TLS'],
      [{ name: 'mongo' }, 'MONGO'],
      [{ name: 'redis-cache' }, 'REDIS'],
      [{ name: 'mysql' }, 'MYSQL'],
      [{ name: 'http_proxy' }, 'HTTP'],
      [{ name: 'web' }, 'TCP'],
      [{}, 'TCP'],
      [{ name: 'http', protocol: 'UDP' }, 'UDP'],
      [{ name: 'web', appProtocol: 'http' }, 'HTTP'],
      [{ name: 'http', appProtocol: 'grpc' }, 'GRPC'],
      [{ name: 'x', appProtocol: 'kubernetes.io/h2c' }, 'HTTP2'],
      [{ name: 'x', appProtocol: 'kubernetes.io/ws' }, 'HTTP'],
      [{ name: 'x', appProtocol: 'kubernetes.io/wss' }, 'HTTPS'],
      [{ name: 'http', appProtocol: 'example.com/custom' }, 'TCP'],
    ];
    for (const [port, expected] of cases) expect(portProtocol(port), JSON.stringify(port)).to.equal(expected);
  });

  it('maps ClusterIP, headless and ExternalName Services, and exportTo from the annotation', () => {
    const ip = toPlatformService(service({ clusterIP: '10.96.0.5', clusterIPs: ['10.96.0.5'], selector: { app: 'a' }, ports: [{ name: 'http', port: 80, targetPort: 'web' as never }] }), OPTIONS);
    expect(ip.service).to.deep.include({ hostname: 'svc.ns.svc.cluster.local', resolution: 'STATIC', location: 'MESH_INTERNAL', addresses: ['10.96.0.5'], exportTo: ['*'] });
    expect(ip.selector).to.deep.equal({ app: 'a' });
    expect(ip.targetPorts.get(80)).to.equal('web');
    const headless = toPlatformService(service({ clusterIP: 'None', ports: [{ port: 80 }] }, {}, { 'networking.mesh.io/exportTo': '., other' }), OPTIONS);
    expect(headless.service).to.deep.include({ resolution: 'NONE', addresses: [], exportTo: ['.', 'other'] });
    expect(headless.selector).to.equal(undefined);
    const external = service({ type: 'ExternalName', externalName: 'db.example.com', ports: [{ name: 'tcp', port: 5432 }] });
    const ext = toPlatformService(external, OPTIONS);
    expect(ext.service).to.deep.include({ resolution: 'DNS', location: 'MESH_EXTERNAL' });
    const eps = endpointsOf(ext, external, [], lookups(), OPTIONS).endpoints.get(5432)!;
    expect(eps.map((e) => `${e.address}:${e.port}`)).to.deep.equal(['db.example.com:5432']);
  });

  it('sends not-ready endpoints as UNHEALTHY only with PILOT_SEND_UNHEALTHY_ENDPOINTS, and terminating ones as DRAINING for persistent-session services', () => {
    const svc = service({ ports: [{ name: 'http', port: 80 }] });
    const slice = sliceOf([
      { addresses: ['10.0.0.1'], conditions: { ready: true } },
      { addresses: ['10.0.0.2'], conditions: { ready: false, serving: false, terminating: false } },
      { addresses: ['10.0.0.3'], conditions: { ready: false, serving: true, terminating: true } },
    ]);
    const ps = toPlatformService(svc, OPTIONS);
    const plain = endpointsOf(ps, svc, [slice], lookups(), OPTIONS);
    expect(plain.endpoints.get(80)!.map((e) => e.address)).to.deep.equal(['10.0.0.1']);
    expect(plain.counts).to.deep.equal({ notReady: 2, noPod: 1, pendingPod: 0 });

    const unhealthy = endpointsOf(ps, svc, [slice], lookups(), { ...OPTIONS, sendUnhealthyEndpoints: true }).endpoints.get(80)!;
    expect(unhealthy.map((e) => `${e.address}:${e.health ?? 'HEALTHY'}`)).to.deep.equal(['10.0.0.1:HEALTHY', '10.0.0.2:UNHEALTHY']);
    const sticky = service({ ports: [{ name: 'http', port: 80 }] }, { 'mesh.io/persistent-session': 'cookie' });
    const draining = endpointsOf(toPlatformService(sticky, OPTIONS), sticky, [slice], lookups(), OPTIONS).endpoints.get(80)!;
    expect(draining.map((e) => `${e.address}:${e.health ?? 'HEALTHY'}`)).to.deep.equal(['10.0.0.1:HEALTHY', '10.0.0.3:DRAINING']);

    // EDS carries the health: UNHEALTHY = 2, DRAINING = 3.
    const cla = loadAssignmentOf('outbound|80||svc.ns.svc.cluster.local', [...unhealthy, draining[1]]) as { endpoints: Array<{ lb_endpoints: Array<{ health_status: number }> }> };
    expect(cla.endpoints.flatMap((l) => l.lb_endpoints.map((e) => e.health_status)).sort()).to.deep.equal([1, 2, 3]);
  });

  it('finds an endpoint without a pod reference by its address; the network of its pod, else the cluster default', () => {
    const svc = service({ ports: [{ name: 'http', port: 80 }] });
    const pod: V1Pod = { metadata: { name: 'p', namespace: 'ns', labels: { app: 'p', 'topology.mesh.io/network': 'net-2' } }, spec: { nodeName: 'n1', serviceAccountName: 'sa', containers: [] }, status: { podIP: '10.0.0.1' } };
    const node: V1Node = { metadata: { name: 'n1', labels: { 'topology.kubernetes.io/region': 'r', 'topology.kubernetes.io/zone': 'z' } } };
    const eps = endpointsOf(toPlatformService(svc, OPTIONS), svc, [sliceOf([{ addresses: ['10.0.0.1'] }, { addresses: ['10.0.0.9'] }])], lookups([pod], [node]), OPTIONS).endpoints.get(80)!;
    expect(eps[0]).to.deep.include({ serviceAccount: 'sa', locality: 'r/z', network: 'net-2', workload: 'Pod/ns/p' });
    expect(eps[0].labels).to.deep.include({ app: 'p', 'topology.mesh.io/cluster': 'c1', 'topology.mesh.io/network': 'net-2' });
    expect(eps[1]).to.deep.include({ serviceAccount: '', locality: '', network: 'net-1' });
    expect(localityOf({ metadata: { labels: { 'topology.kubernetes.io/region': 'r', 'topology.mesh.io/subzone': 's' } } })).to.equal('r//s');
  });
});

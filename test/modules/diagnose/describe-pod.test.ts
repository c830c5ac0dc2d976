/**
 * `x describe pod` from the orchestrator's objects: a meshed pod with its Service, the
 * DestinationRule and VirtualService its proxy uses, merged PeerAuthentication, RBAC rules and
 * an ingress gateway routing to it; an unmeshed pod; a pod no Service selects.
 */
import { expect } from 'chai';
import { KindRegistry, KINDS } from '../../../src/modules/config';
import { PodDescriber } from '../../../src/modules/diagnose';
import { OrchClient } from '../../../src/modules/orch';
import { OrchWorld, startOrchWorld } from '../../helpers/orch-mesh';
import { runCli } from '../../helpers/run-cli';
import { orchClient, runningPod } from './support';

const MESH_CONFIG = `apiVersion: v1
kind: ConfigMap
metadata: { name: mesh, namespace: mesh-system }
data:
  mesh: |
    rootNamespace: mesh-system
    trustDomain: cluster.local
`;

const CONFIG = `apiVersion: networking.mesh.io/v1
kind: DestinationRule
metadata: { name: reviews, namespace: shop }
spec:
  host: reviews
  trafficPolicy:
    tls: { mode: MESH_MUTUAL }
    loadBalancer: { simple: ROUND_ROBIN }
  subsets:
  - { name: v1, labels: { version: v1 } }
  - { name: v2, labels: { version: v2 } }
---
apiVersion: networking.mesh.io/v1
kind: VirtualService
metadata: { name: reviews, namespace: shop }
spec:
  hosts: [reviews]
  http:
  - match: [{ headers: { end-user: { exact: jason } } }]
    route: [{ destination: { host: reviews, subset: v2 } }]
  - route: [{ destination: { host: reviews, subset: v1 } }]
---
apiVersion: security.mesh.io/v1
kind: PeerAuthentication
metadata: { name: default, namespace: mesh-system }
spec: { mtls: { mode: STRICT } }
---
apiVersion: security.mesh.io/v1
kind: PeerAuthentication
metadata: { name: reviews, namespace: shop }
spec:
  selector: { matchLabels: { app: reviews } }
  portLevelMtls: { "9080": { mode: PERMISSIVE } }
---
apiVersion: security.mesh.io/v1
kind: AuthorizationPolicy
metadata: { name: reviews-viewer, namespace: shop }
spec:
  selector: { matchLabels: { app: reviews } }
  rules:
  - from: [{ source: { principals: ["cluster.local/ns/shop/sa/productpage"] } }]
  - to: [{ operation: { methods: [GET] } }]
---
apiVersion: security.mesh.io/v1
kind: AuthorizationPolicy
metadata: { name: other-app, namespace: shop }
spec:
  selector: { matchLabels: { app: ratings } }
  rules: [{ to: [{ operation: { methods: [POST] } }] }]
---
apiVersion: security.mesh.io/v1
kind: RequestAuthentication
metadata: { name: reviews-jwt, namespace: shop }
spec:
  selector: { matchLabels: { app: reviews } }
  jwtRules: [{ issuer: "https://issuer.example", jwksUri: "https://issuer.example/jwks" }]
---
apiVersion: networking.mesh.io/v1
kind: Sidecar
metadata: { name: default, namespace: shop }
spec:
  egress: [{ hosts: ["./*", "mesh-system/*"] }]
---
apiVersion: networking.mesh.io/v1
kind: Gateway
metadata: { name: bookinfo-gateway, namespace: shop }
spec:
  selector: { mesh: ingressgateway }
  servers: [{ port: { number: 8080, name: http, protocol: HTTP }, hosts: ["*"] }]
---
apiVersion: networking.mesh.io/v1
kind: VirtualService
metadata: { name: bookinfo, namespace: shop }
spec:
  hosts: ["*"]
  gateways: [bookinfo-gateway]
  http:
  - match: [{ uri: { prefix: /reviews } }]
    route: [{ destination: { host: reviews, port: { number: 9080 } } }]
`;

const REVIEWS_POD = {
  metadata: { name: 'reviews-v1-abc', namespace: 'shop', labels: { app: 'reviews', version: 'v1' }, annotations: { 'sidecar.mesh.io/status': '{"revision":"default"}' } },
  spec: {
    containers: [
      { name: 'reviews', image: 'reviews:1', ports: [{ name: 'http', containerPort: 9080, protocol: 'TCP' }] },
      { name: 'mesh-proxy', image: 'registry.mesh.io/testing/proxyv2:1.26.0' },
    ],
  },
};

const REVIEWS_DESCRIPTION = `Pod: reviews-v1-abc
   Pod Revision: default
   Pod Ports: 9080 (reviews)
   Pod Proxy: registry.mesh.io/testing/proxyv2:1.26.0
--------------------
Service: reviews
   Port: http 9080/HTTP targets pod port 9080
DestinationRule: reviews for "reviews"
   Matching subsets: v1
      (Non-matching subsets v2)
   Traffic Policy TLS Mode: MESH_MUTUAL
   Policies: load balancer
VirtualService: reviews
   1 additional destination(s) that will not reach this pod
      Route to non-matching subset v2 for (Match: when headers are end-user=jason)
RBAC policies: ns[shop]-policy[reviews-viewer]-rule[0], ns[shop]-policy[reviews-viewer]-rule[1]
--------------------
Effective PeerAuthentication:
   Workload mTLS mode: STRICT
   Port Level mTLS mode:
      9080: PERMISSIVE
Applied PeerAuthentication:
   default.mesh-system, reviews.shop
Applied RequestAuthentication:
   reviews-jwt.shop
Applied Sidecar:
   default.shop
--------------------
Exposed on Ingress Gateway http://203.0.113.10
VirtualService: bookinfo
   Match: /reviews*
`;

describe('diagnose: x describe pod from the orchestrator API', function () {
  this.timeout(30_000);
  let world: OrchWorld;
  let client: OrchClient;
  let describer: PodDescriber;

  before(async () => {
    world = await startOrchWorld({ simulateCluster: false, namespaces: ['shop', 'mesh-system'] });
    await world.apply(MESH_CONFIG);
    await world.apply(CONFIG);
    const s = world.server;
    await s.create({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'reviews', namespace: 'shop' }, spec: { selector: { app: 'reviews' }, ports: [{ name: 'http', port: 9080, targetPort: 9080, protocol: 'TCP' }] } });
    await s.create({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'ratings', namespace: 'shop' }, spec: { selector: { app: 'ratings' }, ports: [{ name: 'http', port: 9080 }] } });
    await runningPod(s, REVIEWS_POD);
    await runningPod(s, { metadata: { name: 'legacy', namespace: 'shop', labels: { app: 'legacy' } }, spec: { containers: [{ name: 'legacy', image: 'legacy:1', ports: [{ containerPort: 53, protocol: 'UDP' }] }] } });
    await runningPod(s, { metadata: { name: 'mesh-ingressgateway-1', namespace: 'mesh-system', labels: { mesh: 'ingressgateway' } }, spec: { containers: [{ name: 'mesh-proxy', image: 'proxyv2', ports: [{ containerPort: 8080 }] }] } });
    const gw = await s.create({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'mesh-ingressgateway', namespace: 'mesh-system' }, spec: { selector: { mesh: 'ingressgateway' }, type: 'LoadBalancer', ports: [{ name: 'http2', port: 80, targetPort: 8080, protocol: 'TCP' }, { name: 'https', port: 443, targetPort: 8443, protocol: 'TCP' }] } });
    await s.update({ ...gw, status: { loadBalancer: { ingress: [{ ip: '203.0.113.10' }] } } });
    client = orchClient(world.kubeconfig);
    describer = new PodDescriber(client, new KindRegistry(KINDS));
  });

  after(async () => {
    client?.stop();
    await world?.close();
  });

  const pod = (name: string) => world.server.get('v1', 'Pod', 'shop', name);

  it('names the Service, DestinationRule subsets and policy, VirtualService routes, RBAC rules, mTLS mode and ingress exposure', async () => {
    const result = await describer.describe(pod('reviews-v1-abc'), { viewerNamespace: 'shop', meshNamespace: 'mesh-system', ignoreUnmeshed: false });
    expect(result.error).to.equal(undefined);
    expect(result.text).to.equal(REVIEWS_DESCRIPTION);
  });

  it('names objects of other namespaces with their namespace when looking from another one', async () => {
    const result = await describer.describe(pod('reviews-v1-abc'), { viewerNamespace: 'default', meshNamespace: 'mesh-system', ignoreUnmeshed: false });
    expect(result.text).to.contain('Pod: reviews-v1-abc.shop\n');
    expect(result.text).to.contain('Service: reviews.shop\n');
    expect(result.text).to.contain('DestinationRule: reviews.shop for "reviews"\n');
  });

  it('says a pod without the proxy is not part of the mesh and fails; --ignoreUnmeshed keeps only its own lines', async () => {
    const result = await describer.describe(pod('legacy'), { viewerNamespace: 'shop', meshNamespace: 'mesh-system', ignoreUnmeshed: false });
    expect(result.text).to.equal('Pod: legacy\n   Pod Revision: \n   Pod Ports: 53/UDP (legacy)\nWARNING: legacy is not part of mesh; no mesh sidecar\n');
    expect(result.error).to.equal('pod shop/legacy has no mesh-proxy container, so no mesh configuration applies to it (--ignoreUnmeshed skips such pods)');
    const quiet = await describer.describe(pod('legacy'), { viewerNamespace: 'shop', meshNamespace: 'mesh-system', ignoreUnmeshed: true });
    expect(quiet).to.deep.equal({ text: 'Pod: legacy\n   Pod Revision: \n   Pod Ports: 53/UDP (legacy)\n' });
  });

  it('names the mesh ConfigMap when its mesh config does not parse, and leaves out resources the daemon would refuse', async () => {
    const cm = world.server.get('v1', 'ConfigMap', 'mesh-system', 'mesh');
    await world.server.update({ ...cm, data: { mesh: 'rootNamespace: [mesh-system' } });
    try {
      let error: Error | undefined;
      await describer.describe(pod('reviews-v1-abc'), { viewerNamespace: 'shop', meshNamespace: 'mesh-system', ignoreUnmeshed: false }).catch((e: Error) => (error = e));
      expect(error?.message).to.match(/^ConfigMap mesh-system\/mesh key mesh: /);
    } finally {
      await world.server.update({ ...world.server.get('v1', 'ConfigMap', 'mesh-system', 'mesh'), data: cm.data });
    }
    // A DestinationRule the daemon refuses (MUTUAL without certificates) is not the one in force,
    // though it would come first by name.
    await world.server.create({ apiVersion: 'networking.mesh.io/v1', kind: 'DestinationRule', metadata: { name: 'aaa-broken', namespace: 'shop' }, spec: { host: 'reviews', trafficPolicy: { tls: { mode: 'MUTUAL' } } } });
    try {
      const result = await describer.describe(pod('reviews-v1-abc'), { viewerNamespace: 'shop', meshNamespace: 'mesh-system', ignoreUnmeshed: false });
      expect(result.text).to.equal(REVIEWS_DESCRIPTION);
    } finally {
      await world.server.delete('networking.mesh.io/v1', 'DestinationRule', 'shop', 'aaa-broken');
    }
  });

  describe('through meshctl', () => {
    const meshctl = (...args: string[]) => runCli('meshctl', [...args, '--orchconfig', world.kubeconfig]);

    it('prints the description and exits 0; the aliases and <pod>.<namespace> work', async () => {
      const r = await meshctl('experimental', 'describe', 'pod', 'reviews-v1-abc', '-n', 'shop');
      expect(r.stderr).to.equal('');
      expect(r.code).to.equal(0);
      expect(r.stdout).to.equal(REVIEWS_DESCRIPTION);
      const aliased = await meshctl('x', 'des', 'po', 'reviews-v1-abc.shop');
      expect(aliased.code, aliased.stderr).to.equal(0);
      expect(aliased.stdout.split('\n')[0]).to.equal('Pod: reviews-v1-abc.shop');
    });

    it('fails naming the pod and namespace when the pod does not exist', async () => {
      const r = await meshctl('x', 'describe', 'pod', 'nope', '-n', 'shop');
      expect(r.code).to.equal(1);
      expect(r.stdout).to.equal('');
      expect(r.stderr.trim()).to.equal('Error: pod nope not found in namespace shop');
    });

    it('warns about a pod without the proxy and exits 1; --ignoreUnmeshed exits 0 quietly', async () => {
      const r = await meshctl('x', 'describe', 'pod', 'legacy', '-n', 'shop');
      expect(r.code).to.equal(1);
      expect(r.stdout).to.contain('WARNING: legacy is not part of mesh; no mesh sidecar\n');
      expect(r.stderr.trim()).to.equal('Error: pod shop/legacy has no mesh-proxy container, so no mesh configuration applies to it (--ignoreUnmeshed skips such pods)');
      const quiet = await meshctl('x', 'describe', 'pod', 'legacy', '-n', 'shop', '--ignoreUnmeshed');
      expect(quiet).to.deep.include({ code: 0, stderr: '', stdout: 'Pod: legacy\n   Pod Revision: \n   Pod Ports: 53/UDP (legacy)\n' });
    });

    it('fails with one line when the orchestrator cannot be reached', async () => {
      const r = await runCli('meshctl', ['x', 'describe', 'pod', 'reviews-v1-abc', '--orchconfig', '/nonexistent/config']);
      expect(r.code).to.equal(1);
      expect(r.stderr.trim().split('\n')).to.have.length(1);
      expect(r.stderr).to.contain('/nonexistent/config');
    });
  });
});

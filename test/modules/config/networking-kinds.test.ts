import { expect } from 'chai';
import { ConfigIssue } from '../../../src/modules/config/issues';
import { KindDefinition } from '../../../src/modules/config/kind';
import { DestinationRuleKind } from '../../../src/modules/config/kinds/destination-rule';
import { GatewayKind } from '../../../src/modules/config/kinds/gateway';
import { SidecarKind } from '../../../src/modules/config/kinds/sidecar';
import { VirtualServiceKind } from '../../../src/modules/config/kinds/virtual-service';
import { WorkloadGroupKind } from '../../../src/modules/config/kinds/workload-group';
import { parseConfigText, ParseResult } from '../../../src/modules/config/parse';
import { KindRegistry } from '../../../src/modules/config/validate';

const registry = new KindRegistry([VirtualServiceKind, DestinationRuleKind, SidecarKind, GatewayKind, WorkloadGroupKind] as KindDefinition[]);
const parse = (text: string): ParseResult => parseConfigText('mesh.yaml', text, registry);

/** 1-based line of the `nth` occurrence of `needle`, so expectations follow the YAML as written. */
function lineOf(text: string, needle: string, nth = 1): number {
  const lines = text.split('\n');
  let seen = 0;
  for (let i = 0; i < lines.length; i++) if (lines[i].includes(needle) && ++seen === nth) return i + 1;
  throw new Error(`"${needle}" not in the YAML`);
}

function expectValid(text: string, count = 1): void {
  const r = parse(text);
  expect(r.issues.map((i) => `${i.field}: ${i.message}`)).to.deep.equal([]);
  expect(r.resources).to.have.length(count);
}

/** Exactly one issue, at `field` and `line`, whose message contains `message`. */
function expectIssue(text: string, field: string, line: number, message: string): ConfigIssue {
  const r = parse(text);
  expect(r.resources, 'the resource should be rejected').to.have.length(0);
  expect(r.issues.map((i) => `${i.field}@${i.location.line}: ${i.message}`)).to.have.length(1);
  const [issue] = r.issues;
  expect(issue.field).to.equal(field);
  expect(issue.location.line).to.equal(line);
  expect(issue.message).to.contain(message);
  return issue;
}

const vs = (spec: string) => `apiVersion: networking.mesh.io/v1
kind: VirtualService
metadata:
  name: reviews
  namespace: bookinfo
spec:
${spec}`;

const oneRoute = (route: string) =>
  vs(`  hosts: [reviews]
  http:
  - name: main
${route}`);

describe('networking.mesh.io kinds', () => {
  describe('VirtualService', () => {
    const full = vs(`  hosts:
  - reviews.bookinfo.svc.cluster.local
  - "*.reviews.example.com"
  gateways: [mesh, istio-system/edge]
  exportTo: ["."]
  http:
  - name: canary
    match:
    - name: jason
      uri: { prefix: /reviews }
      method: { exact: GET }
      headers:
        end-user: { exact: jason }
      queryParams:
        debug: { regex: "^(1|true)$" }
      withoutHeaders:
        x-skip: { exact: "yes" }
      port: 9080
      sourceLabels: { app: productpage }
      sourceNamespace: bookinfo
      ignoreUriCase: true
    route:
    - destination: { host: reviews.bookinfo.svc.cluster.local, subset: v2, port: { number: 9080 } }
      weight: 75
      headers:
        response:
          set: { x-canary: "true" }
    - destination: { host: reviews.bookinfo.svc.cluster.local, subset: v1 }
      weight: 25
    rewrite:
      uri: /
      authority: reviews.internal
    timeout: 10s
    retries:
      attempts: 3
      perTryTimeout: 2s
      retryOn: gateway-error,connect-failure,503
      retryRemoteLocalities: true
    fault:
      delay: { percentage: { value: 0.5 }, fixedDelay: 7s }
      abort: { percentage: { value: 0.1 }, httpStatus: 503 }
    mirror: { host: reviews-shadow }
    mirrorPercentage: { value: 10 }
    corsPolicy:
      allowOrigins: [{ exact: https://example.com }]
      allowMethods: [GET, POST]
      maxAge: 24h
      allowCredentials: false
    headers:
      request:
        add: { x-route: canary }
        remove: [x-debug]
  - name: legacy
    match: [{ uri: { exact: /old } }]
    redirect: { uri: /new, redirectCode: 301 }
  - name: health
    match: [{ uri: { exact: /healthz } }]
    directResponse: { status: 200, body: { string: ok } }
  - name: rest
    route:
    - destination: { host: reviews.bookinfo.svc.cluster.local }
  tcp:
  - match: [{ port: 27017, destinationSubnets: [10.0.0.0/8] }]
    route:
    - destination: { host: mongo.backends.svc.cluster.local, port: { number: 5555 } }
  tls:
  - match:
    - sniHosts: [api.reviews.example.com]
      port: 443
    route:
    - destination: { host: api.external }
      weight: 100`);

    it('accepts a full example in every served version', () => {
      expectValid(full);
      expectValid(full.replace('networking.mesh.io/v1', 'networking.mesh.io/v1beta1'));
      expectValid(full.replace('networking.mesh.io/v1', 'networking.mesh.io/v1alpha3'));
      const [r] = parse(full).resources;
      expect(r.resource.kind).to.equal('VirtualService');
      expect((r.resource.spec as { http: { route: { weight: number }[] }[] }).http[0].route[1].weight).to.equal(25);
    });

    it('rejects weights adding up to 90 and accepts 100', () => {
      const weighted = (a: number, b: number) =>
        oneRoute(`    route:
    - destination: { host: reviews, subset: v1 }
      weight: ${a}
    - destination: { host: reviews, subset: v2 }
      weight: ${b}`);
      const bad = weighted(60, 30);
      expectIssue(bad, 'spec.http[0].route', lineOf(bad, '- destination', 1), 'add up to 90, not 100');
      expectValid(weighted(60, 40));
    });

    it('accepts several destinations with no weights, and one destination with any weight', () => {
      expectValid(oneRoute(`    route:
    - destination: { host: reviews, subset: v1 }
    - destination: { host: reviews, subset: v2 }`));
      expectValid(oneRoute(`    route:
    - destination: { host: reviews }
      weight: 40`));
    });

    it('rejects a weight above 100 at the weight itself', () => {
      const t = oneRoute(`    route:
    - destination: { host: reviews }
      weight: 101`);
      expectIssue(t, 'spec.http[0].route[0].weight', lineOf(t, 'weight: 101'), 'greater than 100');
    });

    it('rejects TCP route weights that do not add up', () => {
      const t = vs(`  hosts: [mongo]
  tcp:
  - route:
    - destination: { host: mongo, subset: a }
      weight: 50
    - destination: { host: mongo, subset: b }
      weight: 20`);
      expectIssue(t, 'spec.tcp[0].route', lineOf(t, '- destination'), 'add up to 70');
    });

    it('requires at least one host', () => {
      const t = vs(`  http:
  - route:
    - destination: { host: reviews }`);
      expectIssue(t, 'spec.hosts', 1, 'at least one host');
    });

    it('rejects a uri match with two kinds', () => {
      const t = oneRoute(`    match:
    - uri:
        exact: /a
        prefix: /b
    route:
    - destination: { host: reviews }`);
      expectIssue(t, 'spec.http[0].match[0].uri', lineOf(t, 'exact: /a'), 'exactly one of exact, prefix or regex');
    });

    it('checks header matches by header name', () => {
      const t = oneRoute(`    match:
    - headers:
        x-user: {}
    route:
    - destination: { host: reviews }`);
      expectIssue(t, 'spec.http[0].match[0].headers.x-user', lineOf(t, 'x-user'), 'exactly one');
    });

    it('rejects redirect together with route', () => {
      const t = oneRoute(`    redirect: { uri: /v2 }
    route:
    - destination: { host: reviews }`);
      expectIssue(t, 'spec.http[0].redirect', lineOf(t, 'redirect:'), 'cannot be combined with route');
    });

    it('requires a route, redirect or direct response', () => {
      const t = oneRoute('    timeout: 5s');
      expectIssue(t, 'spec.http[0]', lineOf(t, '- name: main'), 'needs a route, redirect, directResponse or delegate');
    });

    it('rejects an invalid destination host', () => {
      const t = oneRoute(`    route:
    - destination: { host: "bad_host!" }`);
      expectIssue(t, 'spec.http[0].route[0].destination.host', lineOf(t, 'bad_host'), 'host name');
    });

    it('checks fault percentages and abort status', () => {
      const delay = oneRoute(`    route:
    - destination: { host: reviews }
    fault:
      delay:
        fixedDelay: 5s
        percentage:
          value: 150`);
      expectIssue(delay, 'spec.http[0].fault.delay.percentage.value', lineOf(delay, 'value: 150'), 'greater than 100');
      const abort = oneRoute(`    route:
    - destination: { host: reviews }
    fault:
      abort:
        httpStatus: 700`);
      expectIssue(abort, 'spec.http[0].fault.abort.httpStatus', lineOf(abort, 'httpStatus'), 'greater than 599');
    });

    it('checks retries and durations', () => {
      const attempts = oneRoute(`    route:
    - destination: { host: reviews }
    retries:
      attempts: -1`);
      expectIssue(attempts, 'spec.http[0].retries.attempts', lineOf(attempts, 'attempts'), 'less than 0');
      const perTry = oneRoute(`    route:
    - destination: { host: reviews }
    retries:
      attempts: 2
      perTryTimeout: 2 seconds`);
      expectIssue(perTry, 'spec.http[0].retries.perTryTimeout', lineOf(perTry, 'perTryTimeout'), 'not a duration');
      const retryOn = oneRoute(`    route:
    - destination: { host: reviews }
    retries:
      retryOn: 5xx,sometimes`);
      expectIssue(retryOn, 'spec.http[0].retries.retryOn', lineOf(retryOn, 'retryOn'), '"sometimes"');
      const timeout = oneRoute(`    route:
    - destination: { host: reviews }
    timeout: 1.5ms5`);
      expectIssue(timeout, 'spec.http[0].timeout', lineOf(timeout, 'timeout'), 'not a duration');
    });

    it('rejects unknown fields', () => {
      const t = oneRoute(`    route:
    - destination: { host: reviews }
    retries:
      tries: 3`);
      expectIssue(t, 'spec.http[0].retries.tries', lineOf(t, 'tries: 3'), 'unknown field');
    });

    it('requires TLS routes to match SNI hosts of the VirtualService', () => {
      const t = vs(`  hosts: ["*.example.com"]
  gateways: [edge]
  tls:
  - match:
    - sniHosts: [a.example.com, other.org]
    route:
    - destination: { host: a.example.com }`);
      expectIssue(t, 'spec.tls[0].match[0].sniHosts[1]', lineOf(t, 'sniHosts'), 'not one of');
    });
  });

  describe('DestinationRule', () => {
    const dr = (spec: string) => `apiVersion: networking.mesh.io/v1
kind: DestinationRule
metadata:
  name: reviews
spec:
  host: reviews.bookinfo.svc.cluster.local
${spec}`;

    const full = dr(`  exportTo: ["*"]
  trafficPolicy:
    loadBalancer:
      simple: LEAST_REQUEST
      warmupDurationSecs: 30s
      localityLbSetting:
        enabled: true
        distribute:
        - from: us-west/zone1/*
          to: { "us-west/zone1/*": 80, "us-west/zone2/*": 20 }
    connectionPool:
      tcp:
        maxConnections: 100
        connectTimeout: 30ms
        tcpKeepalive: { probes: 3, time: 7200s, interval: 75s }
        maxConnectionDuration: 1h
        idleTimeout: 5m
      http:
        http1MaxPendingRequests: 64
        http2MaxRequests: 1000
        maxRequestsPerConnection: 10
        maxRetries: 3
        idleTimeout: 60s
        h2UpgradePolicy: UPGRADE
        useClientProtocol: false
        maxConcurrentStreams: 100
    outlierDetection:
      consecutive5xxErrors: 7
      consecutiveGatewayErrors: 5
      interval: 5m
      baseEjectionTime: 15m
      maxEjectionPercent: 50
      minHealthPercent: 30
      splitExternalLocalOriginErrors: true
      consecutiveLocalOriginFailures: 4
    tls:
      mode: MESH_MUTUAL
    portLevelSettings:
    - port: { number: 80 }
      loadBalancer: { simple: ROUND_ROBIN }
    - port: { number: 9080 }
      tls:
        mode: MUTUAL
        clientCertificate: /etc/certs/client.pem
        privateKey: /etc/certs/key.pem
        caCertificates: /etc/certs/ca.pem
        subjectAltNames: [reviews.example.com]
        sni: reviews.example.com
  subsets:
  - name: v1
    labels: { version: v1 }
  - name: v2
    labels: { version: v2 }
    trafficPolicy:
      loadBalancer:
        consistentHash:
          httpCookie: { name: user, path: /, ttl: 0s }
          ringHash: { minimumRingSize: 1024 }
  - name: v3
    labels: { version: v3 }
    trafficPolicy:
      tls: { mode: SIMPLE, credentialName: reviews-client, insecureSkipVerify: false }
  workloadSelector:
    matchLabels: { app: reviews }`);

    it('accepts a full example', () => expectValid(full));

    it('rejects duplicate subset names', () => {
      const t = dr(`  subsets:
  - name: v1
    labels: { version: v1 }
  - name: v1
    labels: { version: v2 }`);
      expectIssue(t, 'spec.subsets[1].name', lineOf(t, '- name: v1', 2), 'defined twice');
    });

    it('requires subset names to be DNS labels', () => {
      const t = dr(`  subsets:
  - name: Version_1`);
      expectIssue(t, 'spec.subsets[0].name', lineOf(t, 'Version_1'), 'DNS label');
    });

    it('requires a host', () => {
      const t = dr('').replace('  host: reviews.bookinfo.svc.cluster.local\n', '  exportTo: ["."]\n');
      expectIssue(t, 'spec.host', 1, 'host name');
    });

    it('rejects simple and consistentHash together', () => {
      const t = dr(`  trafficPolicy:
    loadBalancer:
      simple: ROUND_ROBIN
      consistentHash:
        useSourceIp: true`);
      expectIssue(t, 'spec.trafficPolicy.loadBalancer.consistentHash', lineOf(t, 'useSourceIp'), 'cannot be combined with simple');
    });

    it('requires a client certificate and key for MUTUAL unless credentialName is set', () => {
      const t = dr(`  trafficPolicy:
    tls:
      mode: MUTUAL
      clientCertificate: /etc/certs/client.pem`);
      // A missing field has no line of its own: the document's first line is reported.
      expectIssue(t, 'spec.trafficPolicy.tls.privateKey', 1, 'required for MUTUAL');
      expectValid(dr(`  trafficPolicy:
    tls:
      mode: MUTUAL
      credentialName: reviews-client`));
    });

    it('spells the mesh mode MESH_MUTUAL', () => {
      const t = dr(`  trafficPolicy:
    tls: { mode: ISTIO_MUTUAL }`);
      expectIssue(t, 'spec.trafficPolicy.tls.mode', lineOf(t, 'ISTIO_MUTUAL'), 'MESH_MUTUAL');
    });

    it('keeps maxEjectionPercent within 0..100', () => {
      const t = dr(`  trafficPolicy:
    outlierDetection:
      maxEjectionPercent: 120`);
      expectIssue(t, 'spec.trafficPolicy.outlierDetection.maxEjectionPercent', lineOf(t, '120'), 'greater than 100');
    });

    it('rejects duplicate port-level settings', () => {
      const t = dr(`  trafficPolicy:
    portLevelSettings:
    - port: { number: 80 }
      loadBalancer: { simple: RANDOM }
    - port:
        number: 80
      loadBalancer: { simple: ROUND_ROBIN }`);
      expectIssue(t, 'spec.trafficPolicy.portLevelSettings[1].port.number', lineOf(t, 'number: 80', 2), 'already has settings');
    });

    it('checks policies inside subsets with their own path', () => {
      const t = dr(`  subsets:
  - name: v1
    trafficPolicy:
      connectionPool:
        tcp:
          connectTimeout: 0.5ms`);
      expectIssue(t, 'spec.subsets[0].trafficPolicy.connectionPool.tcp.connectTimeout', lineOf(t, 'connectTimeout'), 'at least 1ms');
    });
  });

  describe('Sidecar', () => {
    const sc = (spec: string) => `apiVersion: networking.mesh.io/v1
kind: Sidecar
metadata:
  name: default
  namespace: bookinfo
spec:
${spec}`;

    it('accepts a full example', () =>
      expectValid(sc(`  workloadSelector:
    labels: { app: ratings }
  ingress:
  - port: { number: 9080, protocol: HTTP, name: http }
    defaultEndpoint: 127.0.0.1:8080
    captureMode: DEFAULT
    connectionPool:
      http: { http1MaxPendingRequests: 10 }
  - port: { number: 9443, protocol: HTTPS, name: https }
    bind: 0.0.0.0
    defaultEndpoint: unix:///var/run/app.sock
    tls: { mode: SIMPLE, serverCertificate: /etc/cert.pem, privateKey: /etc/key.pem }
  egress:
  - port: { number: 9080, protocol: HTTP, name: egresshttp }
    hosts: [prod-us1/*]
  - bind: 127.0.0.2
    captureMode: NONE
    hosts: ["./*", "istio-system/*", "~/*", "*/api.example.com"]
  outboundTrafficPolicy:
    mode: ALLOW_ANY
    egressProxy: { host: egress.example.com, port: { number: 3128 } }
  inboundConnectionPool:
    tcp: { maxConnections: 500 }`)));

    it('requires egress listeners', () => {
      const t = sc(`  ingress:
  - port: { number: 9080, protocol: HTTP, name: http }`);
      expectIssue(t, 'spec.egress', 1, 'at least one egress listener');
    });

    it('requires hosts on every egress listener', () => {
      const t = sc(`  egress:
  - hosts: []`);
      expectIssue(t, 'spec.egress[0].hosts', lineOf(t, 'hosts'), 'at least one namespace/host');
    });

    it('requires namespace/host', () => {
      const t = sc(`  egress:
  - hosts:
    - ./*
    - reviews.bookinfo.svc.cluster.local`);
      expectIssue(t, 'spec.egress[0].hosts[1]', lineOf(t, '- reviews'), 'namespace/host');
    });

    it('requires bind to be an IP address', () => {
      const t = sc(`  egress:
  - bind: localhost
    hosts: ["*/*"]`);
      expectIssue(t, 'spec.egress[0].bind', lineOf(t, 'localhost'), 'not an IP address');
    });
  });

  describe('Gateway', () => {
    const gw = (spec: string) => `apiVersion: networking.mesh.io/v1
kind: Gateway
metadata:
  name: edge
  namespace: istio-system
spec:
  selector: { app: ingressgateway }
${spec}`;

    it('accepts a full example', () =>
      expectValid(gw(`  servers:
  - name: plain
    port: { number: 80, name: http, protocol: HTTP }
    hosts: ["*"]
    tls: { httpsRedirect: true }
  - name: secure
    port: { number: 443, name: https, protocol: HTTPS }
    hosts: [bookinfo/reviews.example.com, "*/*.example.org"]
    tls:
      mode: MUTUAL
      credentialName: reviews-cert
      subjectAltNames: [client.example.com]
      minProtocolVersion: TLSV1_2
      maxProtocolVersion: TLSV1_3
      cipherSuites: [ECDHE-RSA-AES256-GCM-SHA384]
  - port: { number: 443, name: https, protocol: HTTPS }
    hosts: [./files.example.com]
    tls: { mode: SIMPLE, serverCertificate: /etc/cert.pem, privateKey: /etc/key.pem }
  - port: { number: 15443, name: tls, protocol: TLS }
    bind: 0.0.0.0
    hosts: ["*.local"]
    tls: { mode: AUTO_PASSTHROUGH }`)));

    it('requires at least one server', () => {
      const t = gw('  servers: []');
      expectIssue(t, 'spec.servers', lineOf(t, 'servers: []'), 'at least one server');
    });

    it('rejects duplicate server names', () => {
      const t = gw(`  servers:
  - name: web
    port: { number: 80, name: http, protocol: HTTP }
    hosts: ["*"]
  - name: web
    port: { number: 8080, name: http-alt, protocol: HTTP }
    hosts: ["*"]`);
      expectIssue(t, 'spec.servers[1].name', lineOf(t, '- name: web', 2), 'used twice');
    });

    it('requires TLS settings on HTTPS servers', () => {
      const t = gw(`  servers:
  - port: { number: 443, name: https, protocol: HTTPS }
    hosts: ["*"]`);
      expectIssue(t, 'spec.servers[0].tls', 1, 'required for protocol HTTPS');
    });

    it('requires one port name per port number', () => {
      const t = gw(`  servers:
  - port: { number: 80, name: http, protocol: HTTP }
    hosts: [a.example.com]
  - port:
      number: 80
      name: http2
      protocol: HTTP
    hosts: [b.example.com]`);
      expectIssue(t, 'spec.servers[1].port.name', lineOf(t, 'name: http2'), 'already named "http"');
    });
  });

  describe('WorkloadGroup', () => {
    const wg = (spec: string) => `apiVersion: networking.mesh.io/v1
kind: WorkloadGroup
metadata:
  name: reviews-vm
  namespace: bookinfo
spec:
${spec}`;

    it('accepts a full example', () =>
      expectValid(wg(`  metadata:
    labels: { app: reviews, version: v3 }
    annotations: { team: books }
  template:
    ports: { http: 9080 }
    serviceAccount: reviews
    network: vm-net
  probe:
    initialDelaySeconds: 5
    timeoutSeconds: 3
    periodSeconds: 4
    successThreshold: 3
    failureThreshold: 3
    httpGet:
      path: /ready
      port: 9080
      scheme: HTTP
      httpHeaders: [{ name: x-probe, value: "1" }]`)));

    it('requires an empty template address', () => {
      const t = wg(`  template:
    address: 10.0.0.7`);
      expectIssue(t, 'spec.template.address', lineOf(t, '10.0.0.7'), 'must be empty');
    });

    it('allows exactly one probe kind', () => {
      const t = wg(`  template: {}
  probe:
    tcpSocket: { port: 9080 }
    exec: { command: [cat, /tmp/ready] }`);
      expectIssue(t, 'spec.probe', lineOf(t, 'tcpSocket'), 'exactly one of');
    });
  });

  it('rejects a bad document in a multi-document file without stopping the good ones', () => {
    const text = `apiVersion: networking.mesh.io/v1
kind: Gateway
metadata: { name: edge }
spec:
  servers:
  - port: { number: 80, name: http, protocol: HTTP }
    hosts: ["*"]
---
apiVersion: networking.mesh.io/v1
kind: DestinationRule
metadata: { name: reviews }
spec:
  host: reviews
  subsets:
  - name: v1
  - name: v1
---
apiVersion: networking.mesh.io/v1beta1
kind: VirtualService
metadata: { name: reviews }
spec:
  hosts: [reviews]
  http:
  - route:
    - destination: { host: reviews, subset: v1 }
`;
    const r = parse(text);
    expect(r.resources.map((p) => `${p.resource.kind}/${p.resource.metadata.name}@${p.location.documentIndex}`)).to.deep.equal([
      'Gateway/edge@0',
      'VirtualService/reviews@2',
    ]);
    expect(r.issues).to.have.length(1);
    expect(r.issues[0]).to.include({ kind: 'DestinationRule', name: 'reviews', field: 'spec.subsets[1].name' });
    expect(r.issues[0].location).to.deep.equal({ file: 'mesh.yaml', documentIndex: 1, line: lineOf(text, '- name: v1', 2) });
  });
});

import { expect } from 'chai';
import { formatIssue, KindRegistry, KINDS, parseConfigText } from '../../../src/modules/config';

const kinds = new KindRegistry(KINDS);

const SERVICE_ENTRY = `apiVersion: networking.mesh.io/v1
kind: ServiceEntry
metadata:
  name: echo
  namespace: foo
spec:
  hosts: [echo.foo.svc.cluster.local]
  ports:
    - { number: 7070, name: grpc, protocol: GRPC, targetPort: 17070 }
  resolution: STATIC
  location: MESH_INTERNAL
  workloadSelector:
    labels: { app: echo }
`;

const WORKLOAD_ENTRY = `apiVersion: networking.mesh.io/v1beta1
kind: WorkloadEntry
metadata: { name: echo-1, namespace: foo, labels: { team: a } }
spec:
  address: 127.0.0.11
  labels: { app: echo, version: v1 }
  ports: { grpc: 17070 }
  weight: 2
  locality: us/east/a
  serviceAccount: echo
`;

describe('config: parsing and validating files', () => {
  it('turns valid documents into resources with their location', () => {
    const r = parseConfigText('mesh.yaml', `${SERVICE_ENTRY}---\n${WORKLOAD_ENTRY}`, kinds);
    expect(r.issues).to.deep.equal([]);
    expect(r.resources.map((p) => [p.resource.kind, p.resource.metadata.namespace, p.resource.metadata.name, p.location.documentIndex, p.location.line])).to.deep.equal([
      ['ServiceEntry', 'foo', 'echo', 0, 1],
      ['WorkloadEntry', 'foo', 'echo-1', 1, 15],
    ]);
    const we = r.resources[1].resource;
    expect(we.metadata.labels).to.deep.equal({ team: 'a' });
    expect(we.spec).to.include({ address: '127.0.0.11', weight: 2 });
  });

  it('defaults the namespace to default and reads JSON', () => {
    const json = JSON.stringify({ apiVersion: 'networking.mesh.io/v1', kind: 'WorkloadEntry', metadata: { name: 'w' }, spec: { address: '10.0.0.1' } });
    const r = parseConfigText('w.json', json, kinds);
    expect(r.issues).to.deep.equal([]);
    expect(r.resources[0].resource.metadata.namespace).to.equal('default');
  });

  it('rejects a bad document alone, naming file, line, document, resource and field', () => {
    const bad = SERVICE_ENTRY.replace('number: 7070', 'number: 70000').replace('resolution: STATIC', 'resolution: STATIC\n  hostz: []');
    const r = parseConfigText('mesh.yaml', `${bad}---\n${WORKLOAD_ENTRY}`, kinds);
    expect(r.resources.map((p) => p.resource.metadata.name)).to.deep.equal(['echo-1']);
    expect(r.issues.map(formatIssue)).to.have.members([
      'mesh.yaml:9: document 1 (ServiceEntry foo/echo): spec.ports[0].number: must be a port number from 1 to 65535',
      'mesh.yaml:11: document 1 (ServiceEntry foo/echo): spec.hostz: unknown field',
    ]);
  });

  it('runs the semantic checks: duplicates, endpoints against ports, STATIC needs IPs', () => {
    const se = `apiVersion: networking.mesh.io/v1
kind: ServiceEntry
metadata: { name: ext }
spec:
  hosts: [a.example.com, a.example.com]
  ports:
    - { number: 80, name: http }
    - { number: 80, name: http2, protocol: HTTP2 }
    - { number: 81, name: x, protocol: SMTP }
  resolution: STATIC
  endpoints:
    - address: db.example.com
      ports: { nope: 8080 }
`;
    const r = parseConfigText('se.yaml', se, kinds);
    const byField = Object.fromEntries(r.issues.map((i) => [i.field, i.message]));
    expect(byField).to.have.keys(
      'spec.hosts[1]',
      'spec.ports[1].number',
      'spec.ports[2].protocol',
      'spec.endpoints[0].ports.nope',
      'spec.endpoints[0].address',
    );
    expect(r.issues.find((i) => i.field === 'spec.ports[1].number')!.location.line).to.equal(8);
  });

  it('reports YAML syntax errors, unknown kinds and versions, and bad names', () => {
    const text = `kind: ServiceEntry
apiVersion: networking.mesh.io/v9
metadata: { name: a }
---
apiVersion: networking.mesh.io/v1
kind: Telepathy
metadata: { name: b }
---
apiVersion: networking.mesh.io/v1
kind: WorkloadEntry
metadata: { name: Bad_Name }
spec: { address: 10.0.0.1 }
---
key: [unclosed
`;
    const r = parseConfigText('x.yaml', text, kinds);
    const messages = r.issues.map(formatIssue);
    expect(messages[0]).to.match(/^x\.yaml:2: document 1 \(ServiceEntry default\/a\): apiVersion: ServiceEntry is served as networking\.mesh\.io\/v1/);
    expect(messages[1]).to.match(/^x\.yaml:6: document 2 \(Telepathy default\/b\): kind: unknown kind Telepathy/);
    expect(messages[2]).to.match(/^x\.yaml:11: document 3 \(WorkloadEntry default\/Bad_Name\): metadata\.name: "Bad_Name" is not a valid name/);
    expect(messages[3]).to.match(/^x\.yaml:1[45]: document 4: invalid YAML/);
  });
});

import { expect } from 'chai';
import { FieldLines, KindRegistry, KINDS, parseConfigText } from '../../../src/modules/config';

describe('config: the line of each field', () => {
  const lines = () =>
    FieldLines.build((note) => {
      note('spec', 4);
      note('spec.hosts', 5);
      note('spec.hosts[0]', 5);
      note('spec.ports[10].number', 12);
      note('spec.ports[1].number', 9);
      note('spec.hosts', 99); // a duplicate key: the first stands
      note('odd\nkey', 7);
    });

  it('finds a field by its whole path, never by a prefix or suffix of it', () => {
    const l = lines();
    expect(l.lineOf('spec.hosts')).to.equal(5);
    expect(l.lineOf('spec.ports[1].number')).to.equal(9);
    expect(l.lineOf('spec.ports[10].number')).to.equal(12);
    expect(l.lineOf('spec.ports[1]')).to.equal(undefined);
    expect(l.lineOf('hosts')).to.equal(undefined);
    expect(l.lineOf('odd\nkey')).to.equal(undefined);
    expect(l.lineOf('odd')).to.equal(undefined);
  });

  it('answers the same once many lookups have built its index', () => {
    const l = lines();
    for (let i = 0; i < 40; i++) expect(l.lineOf('spec.hosts')).to.equal(5);
    expect(l.lineOf('spec.ports[10].number')).to.equal(12);
    expect(l.lineOf('spec.ports[1]')).to.equal(undefined);
    expect(l.lineOf('odd')).to.equal(undefined);
  });

  it('crosses a thread as its text and reads the same on the other side', () => {
    const l = lines();
    const copy = new FieldLines(structuredClone(l.encoded));
    expect(copy.lineOf('spec.ports[1].number')).to.equal(9);
  });

  it('names the line of each bad item of a long list, past the lookups that scan', () => {
    const items = Array.from({ length: 30 }, (_, i) => `    - { address: 10.0.0.${i}, ports: { http: bad${i} } }`).join('\n');
    const text = `apiVersion: networking.mesh.io/v1\nkind: ServiceEntry\nmetadata: { name: e, namespace: foo }\nspec:\n  hosts: [e.example.com]\n  ports: [{ number: 80, name: http, protocol: HTTP }]\n  resolution: STATIC\n  endpoints:\n${items}\n`;
    const result = parseConfigText('e.yaml', text, new KindRegistry(KINDS));
    const itemIssues = result.issues.filter((i) => i.field?.startsWith('spec.endpoints['));
    expect(itemIssues).to.have.length(30);
    itemIssues.forEach((issue) => expect(issue.location.line, issue.field).to.equal(9 + Number(/\[(\d+)\]/.exec(issue.field!)![1])));
  });
});

import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { DEFAULT_CONFIG_FILE_LIMITS, formatIssue, KindRegistry, KINDS, parseConfigBytes, parseConfigText, ParseResult } from '../../../src/modules/config';

const kinds = new KindRegistry(KINDS);
const parse = (text: string, limits = DEFAULT_CONFIG_FILE_LIMITS): ParseResult => parseConfigText('f.yaml', text, kinds, limits);
const bytes = (data: Buffer): ParseResult => parseConfigBytes('f.yaml', data, kinds);
const formatted = (r: ParseResult) => r.issues.map(formatIssue);

const WORKLOAD_ENTRY = `apiVersion: networking.mesh.io/v1
kind: WorkloadEntry
metadata: { name: w, namespace: foo }
spec: { address: 10.0.0.1 }
`;

/** Parses within `ms` or fails: the limits exist so that no input takes long. */
function parseWithin(ms: number, text: string): ParseResult {
  const started = Date.now();
  const r = parse(text);
  expect(Date.now() - started, 'parse time (ms)').to.be.below(ms);
  return r;
}

describe('config: per-file limits of the parser', () => {
  describe('YAML aliases', () => {
    it('expands a few aliases as YAML says', () => {
      const r = parse(`apiVersion: networking.mesh.io/v1
kind: WorkloadEntry
metadata: { name: w, namespace: foo, labels: &labels { app: w, tier: web } }
spec: { address: 10.0.0.1, labels: *labels }
`);
      expect(r.issues).to.deep.equal([]);
      expect((r.resources[0].resource.spec as { labels: object }).labels).to.deep.equal({ app: 'w', tier: 'web' });
    });

    it('rejects the file past 100 alias references, naming file, line and limit', () => {
      const text = `a: &a x\nlist: [${Array(101).fill('*a').join(', ')}]\n`;
      const r = parseWithin(1000, text);
      expect(r.fileRejected).to.equal(true);
      expect(formatted(r)).to.deep.equal(['f.yaml:2: document 1: more than 100 YAML alias references (the limit per file)']);
      expect(parse(`a: &a x\nlist: [${Array(100).fill('*a').join(', ')}]\n`).fileRejected).to.equal(undefined);
    });

    it('counts aliases across the documents of a file', () => {
      const doc = `a: &a x\nlist: [${Array(60).fill('*a').join(', ')}]\n`;
      expect(formatted(parse(`${doc}---\n${doc}`))).to.deep.equal(['f.yaml:5: document 2: more than 100 YAML alias references (the limit per file)']);
    });

    it('rejects a billion laughs of few aliases by what they would expand to, without expanding them', () => {
      // 9 levels of 10 aliases each: 90 references, 10^9 values.
      const lines = ['l0: &l0 [x, x, x, x, x, x, x, x, x, x]'];
      for (let i = 1; i < 10; i++) lines.push(`l${i}: &l${i} [${Array(10).fill(`*l${i - 1}`).join(', ')}]`);
      const r = parseWithin(1000, lines.join('\n'));
      expect(formatted(r)).to.deep.equal(['f.yaml:5: document 1: YAML aliases expand to more than 100000 values (the limit per file)']);
    });

    it('rejects an alias into its own anchor (a cycle) instead of building a circular value', () => {
      expect(formatted(parse('a: &a [1, *a]\n'))).to.deep.equal(['f.yaml:1: document 1: the YAML alias *a refers to a node that contains it']);
    });
  });

  describe('nesting', () => {
    const nested = (levels: number) => `${'['.repeat(levels)}x${']'.repeat(levels)}\n`;

    it('accepts 100 levels and rejects 101, at the line where it goes too deep', () => {
      expect(parse(nested(100)).fileRejected).to.equal(undefined);
      expect(formatted(parse(`a: 1\nb:\n  c: ${nested(100)}`))).to.deep.equal(['f.yaml:3: document 1: nested more than 100 levels deep (the limit)']);
    });

    it('survives 100 000 levels, closed or not (the YAML composer recurses: this crashed the process)', () => {
      for (const text of [nested(100_000), '['.repeat(100_000), '- '.repeat(50_000) + 'x\n', '{a: '.repeat(50_000)]) {
        const r = parseWithin(5000, text);
        expect(formatted(r)).to.deep.equal(['f.yaml:1: document 1: nested more than 100 levels deep (the limit)']);
      }
    });

    it('counts the nesting aliases bring along', () => {
      const text = `deep: &d ${nested(60)}wrapped: ${'['.repeat(50)}*d${']'.repeat(50)}\n`;
      expect(formatted(parse(text))).to.deep.equal(['f.yaml:2: document 1: nested more than 100 levels deep once aliases are expanded (the limit)']);
    });
  });

  describe('documents', () => {
    it('accepts 10000 documents and rejects the file at the 10001st, naming its line', () => {
      expect(parse('---\na: 1\n'.repeat(10_000)).fileRejected).to.equal(undefined);
      const r = parseWithin(5000, '---\na: 1\n'.repeat(10_001));
      expect(formatted(r)).to.deep.equal(['f.yaml:20001: more than 10000 YAML documents (the limit per file)']);
      expect(r.resources).to.deep.equal([]);
    });

    it('takes its limits as given', () => {
      const r = parse(`${WORKLOAD_ENTRY}---\n${WORKLOAD_ENTRY}---\n${WORKLOAD_ENTRY}`, { ...DEFAULT_CONFIG_FILE_LIMITS, maxDocuments: 2 });
      expect(formatted(r)).to.deep.equal(['f.yaml:10: more than 2 YAML documents (the limit per file)']);
    });
  });

  describe('garbage', () => {
    it('gives one issue for 1 MB of binary garbage, however many lines it has', () => {
      const garbage = Buffer.concat([Buffer.from('apiVersion: v1\n'), randomBytes(1024 * 1024)]);
      garbage[100] = 0;
      const r = bytes(garbage);
      expect(r.issues).to.have.length(1);
      expect(r.fileRejected).to.equal(true);
      expect(r.issues[0].message).to.match(/^binary content \(a NUL byte at offset \d+\): config files are UTF-8 YAML or JSON text$/);
    });

    it('says where a NUL byte or a bad UTF-8 sequence is, and recognises UTF-16', () => {
      expect(formatted(bytes(Buffer.from('a: 1\nb: 2\x00\n')))).to.deep.equal(['f.yaml:2: binary content (a NUL byte at offset 9): config files are UTF-8 YAML or JSON text']);
      expect(formatted(bytes(Buffer.concat([Buffer.from('a: é\nb: '), Buffer.from([0xc3, 0x28]), Buffer.from('\n')])))).to.deep.equal([
        'f.yaml:2: not UTF-8 text (an invalid byte sequence at offset 9): config files are UTF-8 YAML or JSON text',
      ]);
      expect(formatted(bytes(Buffer.from('\ufeffa: 1\n', 'utf16le')))).to.deep.equal(['f.yaml:1: UTF-16 text: config files must be UTF-8']);
      // A UTF-8 byte-order mark is fine.
      expect(bytes(Buffer.from(`\ufeff${WORKLOAD_ENTRY}`)).resources).to.have.length(1);
    });

    it('gives one issue for text that is not YAML, with the number of errors it left out', () => {
      const text = Array.from({ length: 300 }, (_, i) => `key${i}: [unclosed, "quote\n  - : : ]`).join('\n');
      const r = parse(text);
      expect(r.fileRejected).to.equal(true);
      expect(r.issues).to.have.length(1);
      expect(r.issues[0].message).to.match(/^invalid YAML: .* \(and \d+ more YAML errors in this file\)$/);
    });

    it('still reports the documents before a syntax error, then the error once', () => {
      const r = parse(`${WORKLOAD_ENTRY.replace('name: w', 'name: W')}---\nkey: [unclosed\n---\nother: [unclosed\n`);
      expect(r.issues).to.have.length(2);
      expect(formatIssue(r.issues[0])).to.match(/^f\.yaml:3: document 1 \(WorkloadEntry foo\/W\): metadata\.name: "W" is not a valid name/);
      expect(r.issues[1].message).to.match(/^invalid YAML: .*\(and \d+ more YAML errors? in this file\)$/);
      expect(r.issues[1].location.documentIndex).to.equal(1);
    });
  });

  describe('duplicate keys', () => {
    it('are a syntax error at the line of the second key', () => {
      const r = parse('a: 1\nb: 2\na: 3\n');
      expect(formatted(r)).to.deep.equal(['f.yaml:3: document 1: invalid YAML: Map keys must be unique']);
      expect(r.fileRejected).to.equal(true);
      // 1 and "1" are different keys.
      expect(parse('a: 1\n"1": 2\n1: 3\n').fileRejected).to.equal(undefined);
    });

    it('are found in linear time (yaml\'s own check took 24 s for 40 000 keys)', () => {
      const text = Array.from({ length: 40_000 }, (_, i) => `k${i}: ${i}`).join('\n');
      expect(parseWithin(8000, `${text}\nk7: again\n`).issues[0].message).to.equal('invalid YAML: Map keys must be unique');
    });
  });
});

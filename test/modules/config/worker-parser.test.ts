import { expect } from 'chai';
import { DEFAULT_CONFIG_FILE_LIMITS, formatIssue, KindRegistry, KINDS, parseConfigBytes, validateParsedFile, WorkerConfigParser } from '../../../src/modules/config';

const kinds = new KindRegistry(KINDS);

const WORKLOAD_ENTRY = `apiVersion: networking.mesh.io/v1
kind: WorkloadEntry
metadata: { name: w, namespace: foo, labels: { app: w } }
spec: { address: 10.0.0.1, ports: { http: 8080 } }
`;

describe('config: parsing in a worker thread', function () {
  this.timeout(20_000);
  const parsers: WorkerConfigParser[] = [];
  const parser = (options: Partial<ConstructorParameters<typeof WorkerConfigParser>[0]> = {}) => {
    const p = new WorkerConfigParser({ limits: DEFAULT_CONFIG_FILE_LIMITS, ...options });
    parsers.push(p);
    return p;
  };
  afterEach(() => parsers.splice(0).forEach((p) => p.stop()));

  it('gives, once validated against the caller\'s kinds, what parsing in-process gives', async () => {
    const text = Buffer.from(`${WORKLOAD_ENTRY}---\n${WORKLOAD_ENTRY.replace('name: w,', 'name: W,')}`);
    const inProcess = parseConfigBytes('w.yaml', text, kinds);
    for (const fromWorker of [await parser().parse('w.yaml', text), await parser().parse('w.yaml', text, kinds)]) {
      const inWorker = validateParsedFile('w.yaml', fromWorker, kinds);
      expect(JSON.parse(JSON.stringify(inWorker))).to.deep.equal(JSON.parse(JSON.stringify(inProcess)));
      expect(inWorker.resources).to.have.length(1);
      expect(inWorker.issues.map(formatIssue)[0]).to.match(/^w\.yaml:8: document 2 \(WorkloadEntry foo\/W\): metadata\.name/);
    }
  });

  it('validates documents of the built-in kinds in the worker, and leaves a kind a plugin replaced to the caller', async () => {
    const text = Buffer.from(`${WORKLOAD_ENTRY}---\napiVersion: security.mesh.io/v1\nkind: PeerAuthentication\nmetadata: { name: p, namespace: foo }\nspec: {}\n`);
    const builtIn = await parser().parse('w.yaml', text, kinds);
    expect(builtIn.documents.map((d) => 'outcome' in d)).to.deep.equal([true, true]);
    // A plugin's own WorkloadEntry: only the main thread knows it, so the worker hands the document over as parsed.
    const replaced = KINDS.map((k) => (k.kind === 'WorkloadEntry' ? { ...k, check: () => [{ field: 'spec.address', message: 'the plugin says no' }] } : k));
    const pluginKinds = new KindRegistry(replaced);
    const mixed = await parser().parse('w.yaml', text, pluginKinds);
    expect(mixed.documents.map((d) => 'outcome' in d)).to.deep.equal([false, true]);
    const result = validateParsedFile('w.yaml', mixed, pluginKinds);
    expect(result.issues.map(formatIssue)).to.deep.equal(['w.yaml:4: document 1 (WorkloadEntry foo/w): spec.address: the plugin says no']);
    expect(result.resources.map((r) => r.resource.kind)).to.deep.equal(['PeerAuthentication']);
  });

  it('rejects a file that takes longer than its time limit, and parses the next one with a fresh worker', async () => {
    const p = parser({ timeoutMs: 50 });
    const slow = Buffer.from(`${WORKLOAD_ENTRY}---\n`.repeat(5000));
    const r = await p.parse('slow.yaml', slow);
    expect(r.fileRejected).to.equal(true);
    expect(r.issues.map(formatIssue)).to.deep.equal(['slow.yaml: parsing took longer than 50 ms (the limit)']);
    const next = await parser({ timeoutMs: 10_000 }).parse('w.yaml', Buffer.from(WORKLOAD_ENTRY));
    expect(next.documents).to.have.length(1);
  });

  it('rejects a file that needs more memory than the worker may have, and goes on', async () => {
    const p = parser({ maxHeapMb: 64 });
    // Flow mappings cost the YAML library ~170 bytes of heap per input byte.
    const heavy = Buffer.from(`items:\n${Array.from({ length: 60_000 }, (_, i) => `  - {a: ${i}, b: x${i}}`).join('\n')}\n`);
    const r = await p.parse('heavy.yaml', heavy);
    expect(r.issues.map(formatIssue)).to.deep.equal(['heavy.yaml: parsing needs more than 64 MiB of memory (the limit for files of this size)']);
    expect((await p.parse('w.yaml', Buffer.from(WORKLOAD_ENTRY))).documents).to.have.length(1);
  });

  it('ends a parse in flight when stopped, and starts afresh for the next one', async () => {
    const p = parser();
    const inFlight = p.parse('slow.yaml', Buffer.from(`${WORKLOAD_ENTRY}---\n`.repeat(5000)));
    await new Promise((resolve) => setTimeout(resolve, 50));
    p.stop();
    expect((await inFlight).issues.map(formatIssue)).to.deep.equal(['slow.yaml: the parser was stopped']);
    expect((await p.parse('w.yaml', Buffer.from(WORKLOAD_ENTRY))).documents).to.have.length(1);
  });

  it('ends a parse whose worker is still starting when stopped, with the same issue', async () => {
    const p = parser();
    const inFlight = p.parse('w.yaml', Buffer.from(WORKLOAD_ENTRY));
    await Promise.resolve(); // the queue hands the file to the worker on the next tick
    await Promise.resolve();
    p.stop();
    expect((await inFlight).issues.map(formatIssue)).to.deep.equal(['w.yaml: the parser was stopped']);
  });
});

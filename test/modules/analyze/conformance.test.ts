import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse } from 'yaml';
import { REPO_ROOT, runCli } from '../../helpers/run-cli';

/**
 * Every case of the reference's analyze set (test/fixtures/analyze, copied from
 * shared/conformance/analyze) through the real `meshctl analyze --use-orch=false`, only the
 * case's analyzer, default-resources.yaml added; messages compared as multisets of
 * (code, resource), level and name checked against the catalogue.
 */

const FIXTURES = path.join(REPO_ROOT, 'test', 'fixtures', 'analyze');

interface Case {
  case: string;
  analyzer: string;
  inputs: string[];
  meshConfig?: string;
  expected: string;
}

interface Expected {
  code: string;
  level: string;
  name: string;
  resource: string;
}

const cases = parse(fs.readFileSync(path.join(FIXTURES, 'cases.yaml'), 'utf8')) as Case[];
const catalogue = parse(fs.readFileSync(path.join(FIXTURES, 'messages.yaml'), 'utf8')) as Array<{ code: string; name: string; level: string }>;

function multiset(items: Array<{ code: string; resource: string }>): string[] {
  return items.map((i) => `${i.code} ${i.resource}`).sort();
}

describe('meshctl analyze: the conformance cases', function () {
  this.timeout(30_000);

  it('lists every analyzer the set uses', async () => {
    const listed = await runCli('meshctl', ['analyze', '-L']);
    expect(listed.code).to.equal(0);
    for (const c of cases) {
      expect(listed.stdout, c.analyzer).to.include(`* ${c.analyzer}:`);
    }
  });

  for (const c of cases) {
    const title = `${c.case} (${c.analyzer})`;
    it(title, async () => {
      const args = ['analyze', '--use-orch=false', '--analyzer', c.analyzer, '-o', 'json', ...(c.meshConfig ? ['--meshConfigFile', c.meshConfig] : []), ...c.inputs, 'default-resources.yaml'];
      const result = await runCli('meshctl', args, { cwd: FIXTURES });
      const expected = (parse(fs.readFileSync(path.join(FIXTURES, c.expected), 'utf8')) ?? []) as Expected[];
      const failing = expected.some((e) => e.level === 'Error');
      expect(result.code, result.stderr).to.equal(failing ? 79 : 0);
      const got = JSON.parse(result.stdout) as Array<{ code: string; level: string; origin: string; message: string; documentationUrl: string }>;
      expect(multiset(got.map((m) => ({ code: m.code, resource: m.origin })))).to.deep.equal(multiset(expected));
      for (const m of got) {
        const entry = catalogue.find((e) => e.code === m.code);
        expect(entry, m.code).to.exist;
        expect(m.level).to.equal(entry!.level);
        expect(m.message).to.be.a('string').and.not.equal('');
      }
      for (const e of expected) expect(catalogue.find((x) => x.code === e.code)?.name).to.equal(e.name);
    });
  }
});

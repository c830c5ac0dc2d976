import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { REPO_ROOT, runCli } from '../../helpers/run-cli';

/**
 * Every case of the reference's injection set (test/fixtures/inject, copied from
 * shared/conformance/inject) through `meshctl orch-inject`, with the case's settings applied
 * over the base settings, compared as the set's README says: parsed YAML, a null or {} value
 * counts as absent, strings exact.
 */

const FIXTURES = path.join(REPO_ROOT, 'test', 'fixtures', 'inject');

interface Case {
  case: string;
  input: string;
  expected?: string;
  settings: { values?: Record<string, unknown>; mesh?: Record<string, unknown>; iop?: string; nativeSidecars?: boolean; expectedError?: string; expectedWarning?: string };
}

const isMap = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function merge(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out = { ...base };
  for (const [k, v] of Object.entries(over)) out[k] = isMap(v) && isMap(out[k]) ? merge(out[k] as Record<string, unknown>, v) : v;
  return out;
}

/** Drops null and {} values (bottom-up), the Go serializer's leftovers. */
export function normalize(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(normalize);
  if (isMap(v)) {
    const out: Record<string, unknown> = {};
    for (const [k, e] of Object.entries(v)) {
      const n = normalize(e);
      if (n === null || n === undefined || (isMap(n) && Object.keys(n).length === 0)) continue;
      out[k] = n;
    }
    return out;
  }
  return v;
}

function documents(text: string): unknown[] {
  return parseAllDocuments(text, { uniqueKeys: false })
    .map((d) => d.toJS())
    .filter((d) => d !== null && d !== undefined)
    .map(normalize);
}

describe('meshctl orch-inject: the reference injection cases', function () {
  this.timeout(60_000);
  const cases = parse(fs.readFileSync(path.join(FIXTURES, 'cases.yaml'), 'utf8')) as Case[];
  let dir: string;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-inject-'));
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('has every case of the set', () => {
    expect(cases.length).to.equal(29);
  });

  for (const c of cases) {
    it(`${c.case}`, async () => {
      const caseDir = path.join(dir, c.case);
      fs.mkdirSync(caseDir);
      const values = merge(JSON.parse(fs.readFileSync(path.join(FIXTURES, 'settings', 'values.json'), 'utf8')), c.settings.values ?? {});
      const mesh = merge(parse(fs.readFileSync(path.join(FIXTURES, 'settings', 'mesh.yaml'), 'utf8')), c.settings.mesh ?? {});
      fs.writeFileSync(path.join(caseDir, 'values.json'), JSON.stringify(values));
      fs.writeFileSync(path.join(caseDir, 'mesh.yaml'), stringify(mesh));
      const args = [
        'orch-inject',
        '-f',
        path.join(FIXTURES, c.input),
        '--injectConfigFile',
        path.join(FIXTURES, 'settings', 'inject-config.yaml'),
        '--valuesFile',
        path.join(caseDir, 'values.json'),
        '--meshConfigFile',
        path.join(caseDir, 'mesh.yaml'),
      ];
      if (c.settings.iop) args.push('--operatorFileName', path.join(FIXTURES, c.settings.iop));
      const env = { ENABLE_NATIVE_SIDECARS: c.settings.nativeSidecars === false ? 'false' : 'true' };
      const r = await runCli('meshctl', args, { env, timeoutMs: 30_000 });
      if (c.settings.expectedError) {
        expect(r.code, r.stdout).to.not.equal(0);
        expect(r.stderr.toLowerCase()).to.include(c.settings.expectedError.toLowerCase());
        return;
      }
      expect(r.code, r.stderr).to.equal(0);
      if (c.settings.expectedWarning) expect(r.stderr).to.include(c.settings.expectedWarning);
      // Every document is followed by a `---` line.
      expect(r.stdout.endsWith('---\n'), 'output ends with ---').to.equal(true);
      const expected = documents(fs.readFileSync(path.join(FIXTURES, c.expected!), 'utf8'));
      const actual = documents(r.stdout);
      expect(actual.length).to.equal(expected.length);
      actual.forEach((doc, i) => expect(doc, `document ${i + 1}`).to.deep.equal(expected[i]));
    });
  }
});

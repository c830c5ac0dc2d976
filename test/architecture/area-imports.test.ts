import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { REPO_ROOT } from '../helpers/run-cli';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { areaGraph, cycles } = require(path.join(REPO_ROOT, 'scripts', 'area-imports.js')) as {
  areaGraph(root: string): Map<string, Map<string, string[]>>;
  cycles(graph: Map<string, Map<string, string[]>>): string[][];
};

/** A throwaway tree with src/modules/<area>/x.ts files importing each other as given. */
function tree(imports: Record<string, string[]>): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-areas-'));
  for (const [area, targets] of Object.entries(imports)) {
    fs.mkdirSync(path.join(root, 'src', 'modules', area), { recursive: true });
    const lines = targets.map((t, i) => `import { x${i} } from '../${t}/x';`);
    fs.writeFileSync(path.join(root, 'src', 'modules', area, 'x.ts'), `${lines.join('\n')}\nexport const x = 1;\n`);
  }
  return root;
}

describe('architecture: imports between the areas of src/modules', () => {
  it('run one way: no area imports an area that imports it back, directly or through others', () => {
    const graph = areaGraph(REPO_ROOT);
    expect(graph.size).to.be.greaterThan(10);
    expect(cycles(graph)).to.deep.equal([]);
  });

  it('keep the Envoy codec and shared helpers at the bottom', () => {
    const graph = areaGraph(REPO_ROOT);
    expect([...graph.get('shared')!.keys()]).to.deep.equal([]);
    expect([...graph.get('envoy')!.keys()].filter((a) => a !== 'shared')).to.deep.equal([]);
    // The data plane does not depend on the daemon.
    const daemonAreas = ['discovery', 'xds', 'generators', 'model', 'security', 'registry', 'config'];
    expect([...graph.get('proxy')!.keys()].filter((a) => daemonAreas.includes(a))).to.deep.equal([]);
  });

  it('finds a direct cycle and one through a third area', () => {
    const direct = tree({ a: ['b'], b: ['a'], c: [] });
    const indirect = tree({ a: ['b'], b: ['c'], c: ['a'], d: ['a'] });
    try {
      expect(cycles(areaGraph(direct))).to.deep.equal([['a', 'b']]);
      expect(cycles(areaGraph(indirect))).to.deep.equal([['a', 'b', 'c']]);
      expect(cycles(areaGraph(tree({ a: ['b'], b: [] })))).to.deep.equal([]);
    } finally {
      fs.rmSync(direct, { recursive: true, force: true });
      fs.rmSync(indirect, { recursive: true, force: true });
    }
  });

  it('the script exits 1 and names the files behind a cycle', () => {
    const root = tree({ model: ['xds'], xds: ['model'] });
    try {
      fs.mkdirSync(path.join(root, 'scripts'));
      fs.copyFileSync(path.join(REPO_ROOT, 'scripts', 'area-imports.js'), path.join(root, 'scripts', 'area-imports.js'));
      const run = spawnSync(process.execPath, [path.join(root, 'scripts', 'area-imports.js')], { encoding: 'utf8' });
      expect(run.status).to.equal(1);
      expect(run.stderr).to.contain('cycle between model, xds');
      expect(run.stderr).to.contain('src/modules/model/x.ts -> ../xds/x');
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});

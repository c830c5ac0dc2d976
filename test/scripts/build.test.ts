/**
 * scripts/build.js on a small project of its own layout (tsconfig at the root, sources under
 * src/ and test/, output in dist/): an unchanged tree emits nothing, a deleted source leaves no
 * output behind, a deleted output is built again.
 */
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { REPO_ROOT } from '../helpers/run-cli';

describe('scripts/build.js (npm run build)', function () {
  this.timeout(60_000);
  let project: string;
  const at = (...parts: string[]) => path.join(project, ...parts);
  const build = () => {
    const r = spawnSync(process.execPath, [at('scripts', 'build.js')], { cwd: project, encoding: 'utf8', timeout: 30_000 });
    expect(r.status, r.stdout + r.stderr).to.equal(0);
  };

  before(() => {
    project = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-build-'));
    fs.mkdirSync(at('scripts'));
    fs.copyFileSync(path.join(REPO_ROOT, 'scripts', 'build.js'), at('scripts', 'build.js'));
    fs.symlinkSync(path.join(REPO_ROOT, 'node_modules'), at('node_modules'));
    fs.writeFileSync(at('tsconfig.json'), JSON.stringify({
      compilerOptions: { target: 'ES2022', module: 'commonjs', strict: true, rootDir: '.', outDir: 'dist', declaration: true, sourceMap: true, types: [] },
      include: ['src/**/*.ts', 'test/**/*.ts'],
    }));
    fs.mkdirSync(at('src'));
    fs.mkdirSync(at('test'));
    fs.writeFileSync(at('src', 'greet.ts'), 'export const greet = (name: string): string => `hello ${name}`;\n');
    fs.writeFileSync(at('test', 'greet.test.ts'), "import { greet } from '../src/greet';\nexport const said = greet('x');\n");
    fs.writeFileSync(at('test', 'old.test.ts'), 'export const old = 1;\n');
  });
  after(() => fs.rmSync(project, { recursive: true, force: true }));

  it('builds everything the first time, keeping its state in dist/.tsbuildinfo', () => {
    build();
    for (const out of ['src/greet.js', 'src/greet.d.ts', 'src/greet.js.map', 'test/greet.test.js', 'test/old.test.js', '.tsbuildinfo']) {
      expect(fs.existsSync(at('dist', out)), out).to.equal(true);
    }
  });

  it('emits nothing for an unchanged tree', () => {
    const before = fs.statSync(at('dist', 'src', 'greet.js')).mtimeMs;
    build();
    expect(fs.statSync(at('dist', 'src', 'greet.js')).mtimeMs).to.equal(before);
  });

  it('removes the outputs of a deleted source, so no stale compiled test is left to run', () => {
    fs.rmSync(at('test', 'old.test.ts'));
    build();
    expect(fs.readdirSync(at('dist', 'test')).sort()).to.deep.equal(['greet.test.d.ts', 'greet.test.js', 'greet.test.js.map']);
  });

  it('builds a deleted output again, though the build state says the tree is unchanged', () => {
    fs.rmSync(at('dist', 'src', 'greet.js'));
    build();
    expect(fs.readFileSync(at('dist', 'src', 'greet.js'), 'utf8')).to.contain('hello');
  });

  it('compiles an edited source', () => {
    fs.writeFileSync(at('src', 'greet.ts'), 'export const greet = (name: string): string => `hi ${name}`;\n');
    build();
    expect(fs.readFileSync(at('dist', 'src', 'greet.js'), 'utf8')).to.contain('hi ${name}');
  });
});

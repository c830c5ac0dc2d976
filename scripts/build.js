#!/usr/bin/env node
// `npm run build`: tsc into dist/, incremental so that building an unchanged tree (as `npm test`
// does right after `npm install` built it) only checks, yet exact:
// - the build state lives in dist/.tsbuildinfo, so removing dist/ means a full build;
// - a source whose output is missing (part of dist/ deleted by hand) forces a full build, since
//   tsc trusts the build state and would not emit it again;
// - outputs whose source is gone are removed, so mocha never runs a stale compiled test.
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const dist = path.join(root, 'dist');
const buildInfo = path.join(dist, '.tsbuildinfo');
// The directories tsconfig.json compiles (rootDir is the repository, outDir dist/).
const SOURCE_DIRS = ['src', 'commands', 'test', 'bench', 'examples'];
const OUTPUT = /\.(js|js\.map|d\.ts|d\.ts\.map)$/;
// Example plugins ship their .proto files next to their compiled code, as a package would.
const ASSETS = { dir: 'examples', pattern: /\.proto$/ };

function filesUnder(dir) {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    return entry.isDirectory() ? filesUnder(full) : [full];
  });
}

const sources = SOURCE_DIRS.flatMap((d) => filesUnder(path.join(root, d))).filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'));
const outputOf = (source) => path.join(dist, path.relative(root, source)).replace(/\.ts$/, '.js');
const sourceOf = (output) => path.join(root, path.relative(dist, output)).replace(OUTPUT, '.ts');

if (fs.existsSync(buildInfo) && sources.some((s) => !fs.existsSync(outputOf(s)))) fs.rmSync(buildInfo);

const tsc = spawnSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.json', '--incremental', '--tsBuildInfoFile', buildInfo], {
  cwd: root,
  stdio: 'inherit',
});
if (tsc.status !== 0) process.exit(tsc.status ?? 1);

for (const dir of SOURCE_DIRS) {
  for (const output of filesUnder(path.join(dist, dir))) {
    if (OUTPUT.test(output) && !fs.existsSync(sourceOf(output))) fs.rmSync(output);
  }
}

for (const asset of filesUnder(path.join(root, ASSETS.dir)).filter((f) => ASSETS.pattern.test(f))) {
  const copy = path.join(dist, path.relative(root, asset));
  fs.mkdirSync(path.dirname(copy), { recursive: true });
  fs.copyFileSync(asset, copy);
}
for (const copy of filesUnder(path.join(dist, ASSETS.dir)).filter((f) => ASSETS.pattern.test(f))) {
  if (!fs.existsSync(path.join(root, path.relative(dist, copy)))) fs.rmSync(copy);
}

#!/usr/bin/env node
// Records what was built (version, git revision, tree state) in dist/build-info.json,
// which `version` on every program prints. Runs as the last step of `npm run build`.
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));

function git(...args) {
  try {
    return execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return undefined;
  }
}

const revision = git('rev-parse', 'HEAD') ?? 'unknown';
const porcelain = git('status', '--porcelain', '--untracked-files=no');
const info = {
  version: pkg.version,
  revision,
  status: porcelain === undefined ? 'unknown' : porcelain === '' ? 'Clean' : 'Modified',
  tag: git('describe', '--tags', '--exact-match') ?? pkg.version,
};
fs.mkdirSync(path.join(root, 'dist'), { recursive: true });
fs.writeFileSync(path.join(root, 'dist', 'build-info.json'), JSON.stringify(info, null, 2) + '\n');

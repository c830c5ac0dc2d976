#!/usr/bin/env node
// Writes manifests/crds/<group>.yaml: the CustomResourceDefinitions of the mesh kinds, derived
// from their spec classes (src/modules/config/crd-schema.ts). Run after `npm run build`;
// test/modules/config/crds.test.ts fails when the files and the classes disagree.
'use strict';
require('reflect-metadata');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const { crdManifests, KINDS } = require(path.join(root, 'dist', 'src', 'modules', 'config'));
const dir = path.join(root, 'manifests', 'crds');
fs.mkdirSync(dir, { recursive: true });
for (const [file, text] of crdManifests(KINDS)) {
  fs.writeFileSync(path.join(dir, file), text);
  console.log(`wrote ${path.relative(root, path.join(dir, file))}`);
}

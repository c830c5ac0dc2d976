#!/usr/bin/env node
/*
 * The import graph between the areas of src/modules (one folder each), and its cycles.
 * `node scripts/area-imports.js` prints each area's imports and exits 1 when two areas import
 * each other, directly or through others; test/architecture runs the same check.
 */
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*|^\s*import\s+)['"](\.{1,2}\/[^'"]+)['"]/gm;

function sourceFiles(dir) {
  const out = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sourceFiles(full));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) out.push(full);
  }
  return out;
}

/** area → (imported area → the first few `file -> import` lines that make the edge). */
function areaGraph(root) {
  const modules = path.join(root, 'src', 'modules');
  const graph = new Map();
  for (const area of fs.readdirSync(modules, { withFileTypes: true }).filter((e) => e.isDirectory())) graph.set(area.name, new Map());
  for (const file of sourceFiles(modules)) {
    const from = path.relative(modules, file).split(path.sep)[0];
    const text = fs.readFileSync(file, 'utf8');
    for (const match of text.matchAll(IMPORT)) {
      const target = path.relative(modules, path.resolve(path.dirname(file), match[1]));
      if (target.startsWith('..')) continue;
      const to = target.split(path.sep)[0];
      if (to === from || !graph.has(to)) continue;
      const edges = graph.get(from);
      if (!edges.has(to)) edges.set(to, []);
      edges.get(to).push(`${path.relative(root, file)} -> ${match[1]}`);
    }
  }
  return graph;
}

/** The strongly connected groups of more than one area (Tarjan): each is a cycle between areas. */
function cycles(graph) {
  let index = 0;
  const stack = [];
  const state = new Map();
  const found = [];
  const visit = (v) => {
    state.set(v, { index, low: index, onStack: true });
    index++;
    stack.push(v);
    for (const w of graph.get(v)?.keys() ?? []) {
      if (!state.has(w)) {
        visit(w);
        state.get(v).low = Math.min(state.get(v).low, state.get(w).low);
      } else if (state.get(w).onStack) {
        state.get(v).low = Math.min(state.get(v).low, state.get(w).index);
      }
    }
    if (state.get(v).low === state.get(v).index) {
      const group = [];
      let w;
      do {
        w = stack.pop();
        state.get(w).onStack = false;
        group.push(w);
      } while (w !== v);
      if (group.length > 1) found.push(group.sort());
    }
  };
  for (const v of graph.keys()) if (!state.has(v)) visit(v);
  return found;
}

/** Within a cycle, the edges that close it, with the files behind each, for the error message. */
function describeCycle(graph, group) {
  const lines = [];
  for (const from of group) {
    for (const [to, where] of graph.get(from)) {
      if (group.includes(to)) lines.push(`  ${from} -> ${to}: ${where.slice(0, 3).join('; ')}${where.length > 3 ? ` (+${where.length - 3} more)` : ''}`);
    }
  }
  return lines.join('\n');
}

module.exports = { areaGraph, cycles, describeCycle };

if (require.main === module) {
  const root = path.resolve(__dirname, '..');
  const graph = areaGraph(root);
  for (const [from, edges] of [...graph].sort()) {
    console.log(`${from} -> ${[...edges.keys()].sort().join(', ') || '(nothing)'}`);
  }
  const found = cycles(graph);
  for (const group of found) console.error(`cycle between ${group.join(', ')}:\n${describeCycle(graph, group)}`);
  process.exit(found.length > 0 ? 1 : 0);
}

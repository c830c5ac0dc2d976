/*
 * Loaded into a program with `node --require` (or NODE_OPTIONS): when the program exits it
 * appends one JSON line to the file MESH_MODULE_PROBE names, holding the process's own CPU
 * time and every module it loaded (the keys of require.cache). Used by the start-up benchmark
 * and by the test that keeps heavy libraries out of commands that do not need them.
 */
import * as fs from 'node:fs';

export interface ProbeRecord {
  cpuMs: number;
  modules: string[];
}

const out = process.env.MESH_MODULE_PROBE;
if (out) {
  process.on('exit', () => {
    const cpu = process.cpuUsage();
    const record: ProbeRecord = { cpuMs: (cpu.user + cpu.system) / 1000, modules: Object.keys(require.cache) };
    fs.appendFileSync(out, JSON.stringify(record) + '\n');
  });
}

/** The records a probe file holds, one per process that exited. */
export function readProbeFile(file: string): ProbeRecord[] {
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as ProbeRecord);
}

/** The npm packages among `modules` (scoped names whole), each once. */
export function packagesLoaded(modules: readonly string[]): Set<string> {
  const names = new Set<string>();
  for (const m of modules) {
    const match = /[\\/]node_modules[\\/]((?:@[^\\/]+[\\/])?[^\\/]+)/.exec(m);
    if (match) names.add(match[1].replace(/\\/g, '/'));
  }
  return names;
}

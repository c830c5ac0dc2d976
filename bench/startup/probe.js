'use strict';
/*
 * Loaded into a measured program with `node --require`: when the program exits it appends one
 * JSON line to the file BENCH_STARTUP_PROBE names with the process's own CPU time and the
 * modules it loaded (require.cache). Plain JavaScript so it adds nothing to what it measures.
 */
const fs = require('node:fs');

const out = process.env.BENCH_STARTUP_PROBE;
if (out) {
  process.on('exit', () => {
    const cpu = process.cpuUsage();
    const modules = Object.keys(require.cache);
    fs.appendFileSync(out, JSON.stringify({ cpuMs: (cpu.user + cpu.system) / 1000, modules }) + '\n');
  });
}

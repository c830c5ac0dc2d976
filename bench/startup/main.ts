/**
 * Start-up benchmark (see bench/README.md): runs each program as an operator would (node
 * bin/<program> ...) several times and reports the median wall time, the median CPU time of
 * the process (read inside it by test/helpers/module-probe) and how many modules it loaded.
 * Informative only: nothing here fails on a figure.
 *
 *   npm run bench:startup -- [--runs N] [--json]
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { readProbeFile } from '../../test/helpers/module-probe';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const PROBE = path.join(ROOT, 'dist', 'test', 'helpers', 'module-probe.js');

/** The measured commands: the ones operators type most, and those the test suite spawns most. */
const COMMANDS: { program: string; args: string[] }[] = [
  { program: 'meshctl', args: ['version', '--remote=false'] },
  { program: 'meshctl', args: ['--help'] },
  { program: 'meshctl', args: ['analyze', '--use-orch=false', 'samples/config/httpbin.yaml'] },
  { program: 'meshctl', args: ['proxy-config', 'cluster', '-f', 'test/fixtures/proxy-config/all/config_dump.json'] },
  { program: 'pilot-agent', args: ['--help'] },
  { program: 'pilot-discovery', args: ['--help'] },
];

interface Result {
  command: string;
  runs: number;
  wallMs: number;
  cpuMs: number;
  modules: number;
  exitCode: number | null;
}

const USAGE = `usage: npm run bench:startup -- [--runs N] [--json]

  --runs N   runs of each command; the medians are reported (default 7)
  --json     print the results as JSON

Run \`npm run build\` first: the programs run from dist/. Figures on a shared machine vary;
CPU time varies less than wall time.`;

function parseOptions(argv: string[]): { runs: number; json: boolean } {
  const o = { runs: 7, json: false };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    if (flag === '--runs') {
      o.runs = Number(argv[++i]);
      if (!Number.isInteger(o.runs) || o.runs < 1) throw new Error(`--runs must be a positive integer, got ${argv[i]}`);
    } else if (flag === '--json') o.json = true;
    else if (flag === '--help' || flag === '-h') {
      console.log(USAGE);
      process.exit(0);
    } else throw new Error(`unknown option ${flag}\n${USAGE}`);
  }
  return o;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

function measure(program: string, args: string[], runs: number, dir: string): Result {
  const walls: number[] = [];
  const cpus: number[] = [];
  let modules = 0;
  let exitCode: number | null = null;
  const probeFile = path.join(dir, 'probe.jsonl');
  for (let i = 0; i < runs; i++) {
    fs.rmSync(probeFile, { force: true });
    const start = process.hrtime.bigint();
    const run = spawnSync(process.execPath, ['--require', PROBE, path.join(ROOT, 'bin', program), ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: dir, MESH_MODULE_PROBE: probeFile },
      stdio: ['ignore', 'ignore', 'pipe'],
      timeout: 60_000,
    });
    walls.push(Number(process.hrtime.bigint() - start) / 1e6);
    if (run.error) throw new Error(`${program} ${args.join(' ')}: ${run.error.message}`);
    exitCode = run.status;
    if (run.status !== 0) throw new Error(`${program} ${args.join(' ')} exited ${run.status}: ${run.stderr.toString().trim()}`);
    const probe = readProbeFile(probeFile).pop();
    if (!probe) throw new Error(`${program} ${args.join(' ')}: the probe wrote nothing`);
    cpus.push(probe.cpuMs);
    modules = probe.modules.length;
  }
  return { command: `${program} ${args.join(' ')}`, runs, wallMs: median(walls), cpuMs: median(cpus), modules, exitCode };
}

function main(): void {
  const o = parseOptions(process.argv.slice(2));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-startup-'));
  try {
    const results = COMMANDS.map(({ program, args }) => measure(program, args, o.runs, dir));
    if (o.json) {
      console.log(JSON.stringify({ cpus: os.cpus().length, loadavg: os.loadavg(), results }, null, 2));
      return;
    }
    console.log(`start-up, median of ${o.runs} runs (${os.cpus().length} CPUs, load average ${os.loadavg()[0].toFixed(2)})`);
    console.log(`${'wall ms'.padStart(8)} ${'CPU ms'.padStart(8)} ${'modules'.padStart(8)}  command`);
    for (const r of results) console.log(`${r.wallMs.toFixed(0).padStart(8)} ${r.cpuMs.toFixed(0).padStart(8)} ${String(r.modules).padStart(8)}  ${r.command}`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

try {
  main();
} catch (err) {
  console.error(`bench:startup: ${(err as Error).message}`);
  process.exitCode = 1;
}

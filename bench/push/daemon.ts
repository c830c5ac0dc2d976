/**
 * The daemon under test, in its own process (so its RSS and CPU are its own): started as a user
 * would (`pilot-discovery discovery --configDir ...` on loopback, ports picked by the system,
 * learned from its log), like test/helpers/daemon.ts does.
 */
import { ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';

export const REPO_ROOT = path.resolve(__dirname, '..', '..', '..');

export class BenchError extends Error {}

/** What Daemon.start waits for (the ports it learns, then readiness). */
const STARTUP_LINE = /listening on \S+:\d+|daemon ready/;

export interface DaemonOptions {
  configDir: string;
  /** Where the daemon's output goes (kept with --keep). */
  logFile: string;
  /** Extra node flags, e.g. --cpu-prof. */
  nodeArgs: string[];
  env: NodeJS.ProcessEnv;
  startTimeoutMs: number;
}

export class Daemon {
  grpcPort = 0;
  monitoringPort = 0;
  private tail = '';
  /**
   * The start-up lines waited for, kept apart from the tail: a daemon run with tracing flags
   * can write more than the tail holds between them, and the bench would wait for a line it
   * already had.
   */
  private readonly startupLines: string[] = [];
  private readonly log: fs.WriteStream;
  private readonly waiters: Array<() => void> = [];
  private readonly exited: Promise<number | null>;
  /** Lines worth reporting (rejected config, internal errors). */
  readonly problems: string[] = [];
  private stopping = false;

  private constructor(readonly child: ChildProcess, options: DaemonOptions) {
    this.log = fs.createWriteStream(options.logFile);
    let partial = '';
    const onData = (d: Buffer) => {
      this.log.write(d);
      const text = partial + d.toString();
      const lines = text.split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        if (/rejected config|xDS error|push context build failed|ACK ERROR|send failure/.test(line) && this.problems.length < 20) this.problems.push(line);
        if (STARTUP_LINE.test(line) && this.startupLines.length < 20) this.startupLines.push(line);
      }
      // Start-up lines are all that is looked for; keep the tail bounded.
      this.tail = (this.tail + d.toString()).slice(-200_000);
      for (const w of this.waiters.splice(0)) w();
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    this.exited = new Promise((resolve) =>
      child.on('exit', (code) => {
        for (const w of this.waiters.splice(0)) w();
        resolve(code);
      }),
    );
  }

  get pid(): number {
    return this.child.pid!;
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Throws when the daemon died on its own. */
  check(): void {
    if (!this.alive && !this.stopping) {
      throw new BenchError(`the daemon exited (code ${this.child.exitCode}, signal ${this.child.signalCode}); last output:\n${this.tail.slice(-3000)}`);
    }
  }

  static async start(options: DaemonOptions): Promise<Daemon> {
    const main = path.join(REPO_ROOT, 'dist', 'src', 'main.js');
    if (!fs.existsSync(main)) throw new BenchError(`${main} is missing: build the daemon first (npm run build)`);
    const child = spawn(
      process.execPath,
      [
        ...options.nodeArgs,
        path.join(REPO_ROOT, 'bin', 'pilot-discovery'),
        'discovery',
        '--configDir',
        options.configDir,
        '--grpcAddr',
        '127.0.0.1:0',
        '--httpAddr',
        '127.0.0.1:0',
        '--monitoringAddr',
        '127.0.0.1:0',
      ],
      { cwd: REPO_ROOT, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const daemon = new Daemon(child, options);
    const port = async (what: string) => Number(/(\d+)\s*$/.exec(await daemon.waitForStartupLine(new RegExp(`${what} listening on \\S+:\\d+`), options.startTimeoutMs))![1]);
    try {
      daemon.grpcPort = await port('xDS \\(gRPC\\)');
      daemon.monitoringPort = await port('monitoring');
      await daemon.waitForStartupLine(/daemon ready/, options.startTimeoutMs);
    } catch (e) {
      // Nobody else knows this process yet: left running, it would hold its ports and memory.
      await daemon.stop(2_000);
      throw e;
    }
    return daemon;
  }

  /** Waits for a start-up line (STARTUP_LINE) matching `pattern`; the tail only goes into the error. */
  private waitForStartupLine(pattern: RegExp, timeoutMs: number): Promise<string> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new BenchError(`the daemon did not log ${pattern} within ${timeoutMs} ms; output:\n${this.tail.slice(-3000)}`)), timeoutMs);
      const check = () => {
        const m = pattern.exec(this.startupLines.join('\n'));
        if (m) {
          clearTimeout(timer);
          resolve(m[0]);
        } else if (!this.alive) {
          clearTimeout(timer);
          reject(new BenchError(`the daemon exited (code ${this.child.exitCode}) before logging ${pattern}; output:\n${this.tail.slice(-3000)}`));
        } else this.waiters.push(check);
      };
      check();
    });
  }

  /** SIGTERM, then SIGKILL after `graceMs`. */
  async stop(graceMs = 10_000): Promise<void> {
    this.stopping = true;
    if (this.alive) {
      this.child.kill('SIGTERM');
      const timer = setTimeout(() => {
        if (this.alive) this.child.kill('SIGKILL');
      }, graceMs);
      await this.exited;
      clearTimeout(timer);
    }
    // Stopped once before the transport-limit run and again by the bench's cleanup.
    if (!this.log.writableEnded) await new Promise<void>((resolve) => this.log.end(resolve));
  }

  /** Synchronous last resort (process exit handlers). */
  killNow(): void {
    this.stopping = true;
    if (this.alive) this.child.kill('SIGKILL');
  }

  async metrics(): Promise<Metrics> {
    const text = await httpGet(`http://127.0.0.1:${this.monitoringPort}/metrics`);
    return parseMetrics(text);
  }
}

// ---------------------------------------------------------------------------------------------
// /proc
// ---------------------------------------------------------------------------------------------

export interface ProcMemory {
  rssBytes: number;
  /** Peak RSS since the process started (VmHWM). */
  hwmBytes: number;
}

export function procMemory(pid: number): ProcMemory | undefined {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0) * 1024;
    return { rssBytes: kb('VmRSS'), hwmBytes: kb('VmHWM') };
  } catch {
    return undefined;
  }
}

/** User + system CPU seconds of a process (clock ticks of 1/100 s, the Linux USER_HZ). */
export function procCpuSeconds(pid: number): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // fields[0] is field 3 (state): utime is field 14, stime field 15.
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

/** Samples a process's RSS every `everyMs`, keeping the peak since the last reset. */
export class RssSampler {
  peakBytes = 0;
  lastBytes = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly pid: number, everyMs = 100) {
    this.timer = setInterval(() => this.sample(), everyMs);
    this.timer.unref();
    this.sample();
  }

  sample(): number {
    const m = procMemory(this.pid);
    if (m) {
      this.lastBytes = m.rssBytes;
      this.peakBytes = Math.max(this.peakBytes, m.rssBytes);
    }
    return this.lastBytes;
  }

  resetPeak(): void {
    this.peakBytes = this.sample();
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

/**
 * Event-loop responsiveness of the daemon, seen from outside: GET /ready on its monitoring
 * port, one request at a time, every `everyMs`. A slow answer means the daemon's event loop
 * was blocked (no I/O, so no xDS bytes leave either).
 */
export class StallProbe {
  maxMs = 0;
  private inFlightSince = 0;
  private stopped = false;
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

  constructor(private readonly port: number, private readonly everyMs = 200) {
    this.next();
  }

  private next(): void {
    if (this.stopped) return;
    const started = Date.now();
    this.inFlightSince = started;
    const done = () => {
      this.inFlightSince = 0;
      this.maxMs = Math.max(this.maxMs, Date.now() - started);
      setTimeout(() => this.next(), this.everyMs).unref();
    };
    const req = http.get({ host: '127.0.0.1', port: this.port, path: '/ready', agent: this.agent }, (res) => {
      res.resume();
      res.on('end', done);
    });
    req.on('error', done);
  }

  /** The longest wait in the window, including a request still unanswered. */
  current(): number {
    return Math.max(this.maxMs, this.inFlightSince ? Date.now() - this.inFlightSince : 0);
  }

  reset(): void {
    this.maxMs = 0;
  }

  stop(): void {
    this.stopped = true;
    this.agent.destroy();
  }
}

// ---------------------------------------------------------------------------------------------
// Prometheus text
// ---------------------------------------------------------------------------------------------

/** Sample name with its labels as written (`name{a="b"}`) → value. */
export type Metrics = Map<string, number>;

export function parseMetrics(text: string): Metrics {
  const out: Metrics = new Map();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const space = line.lastIndexOf(' ');
    out.set(line.slice(0, space), Number(line.slice(space + 1)));
  }
  return out;
}

function labelsOf(key: string): Record<string, string> {
  const open = key.indexOf('{');
  const labels: Record<string, string> = {};
  if (open < 0) return labels;
  for (const m of key.slice(open + 1, -1).matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[m[1]] = m[2];
  return labels;
}

function nameOf(key: string): string {
  const open = key.indexOf('{');
  return open < 0 ? key : key.slice(0, open);
}

export interface HistogramDelta {
  count: number;
  sum: number;
  /** Upper bound (le) → cumulative count. */
  buckets: Array<[number, number]>;
}

/**
 * The change of histogram `name` between two scrapes, summed over series matching `filter`
 * (e.g. one `type`).
 */
export function histogramDelta(before: Metrics, after: Metrics, name: string, filter: (labels: Record<string, string>) => boolean = () => true): HistogramDelta {
  const d = (key: string) => (after.get(key) ?? 0) - (before.get(key) ?? 0);
  let count = 0;
  let sum = 0;
  const buckets = new Map<number, number>();
  for (const key of after.keys()) {
    const n = nameOf(key);
    if (n !== `${name}_count` && n !== `${name}_sum` && n !== `${name}_bucket`) continue;
    const labels = labelsOf(key);
    const le = labels.le;
    delete labels.le;
    if (!filter(labels)) continue;
    if (n.endsWith('_count')) count += d(key);
    else if (n.endsWith('_sum')) sum += d(key);
    else {
      const bound = le === '+Inf' ? Infinity : Number(le);
      buckets.set(bound, (buckets.get(bound) ?? 0) + d(key));
    }
  }
  return { count, sum, buckets: [...buckets.entries()].sort((a, b) => a[0] - b[0]) };
}

/** A quantile estimated from buckets (linear within a bucket, as Prometheus does). */
export function histogramQuantile(h: HistogramDelta, q: number): number | undefined {
  if (h.count <= 0) return undefined;
  const rank = q * h.count;
  let prevBound = 0;
  let prevCount = 0;
  for (const [bound, cumulative] of h.buckets) {
    if (cumulative >= rank) {
      if (bound === Infinity) return prevBound;
      const inBucket = cumulative - prevCount;
      return inBucket <= 0 ? bound : prevBound + ((bound - prevBound) * (rank - prevCount)) / inBucket;
    }
    prevBound = bound;
    prevCount = cumulative;
  }
  return prevBound;
}

/** The labels values a histogram has series for (e.g. every `type`). */
/** A counter's increase between two scrapes, per value of `label`. */
export function counterDeltaBy(before: Metrics, after: Metrics, name: string, label: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [key, value] of after) {
    if (nameOf(key) !== name) continue;
    const by = labelsOf(key)[label] ?? '';
    out[by] = (out[by] ?? 0) + value - (before.get(key) ?? 0);
  }
  return out;
}

export function labelValues(m: Metrics, name: string, label: string): string[] {
  const out = new Set<string>();
  for (const key of m.keys()) if (nameOf(key) === `${name}_count`) out.add(labelsOf(key)[label] ?? '');
  return [...out].sort();
}

function httpGet(url: string, timeoutMs = 30_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (body += c));
      res.on('end', () => (res.statusCode === 200 ? resolve(body) : reject(new BenchError(`GET ${url}: HTTP ${res.statusCode}`))));
    });
    req.setTimeout(timeoutMs, () => req.destroy(new BenchError(`GET ${url}: no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
  });
}

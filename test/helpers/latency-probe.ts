import { spawn } from 'node:child_process';
import * as http from 'node:http';
import { performance } from 'node:perf_hooks';
import { sidecarNode, SotwClient } from './ads-client';

/** What the probe saw: latencies in ms, and anything that was not a quick success. */
export interface ProbeReport {
  ready: number[];
  xds: number[];
  failures: string[];
}

export interface RunningProbe {
  /** Stops probing and returns what it saw. */
  stop(): Promise<ProbeReport>;
}

/**
 * Measures how quickly a daemon answers while a test does something to it: GET /ready every
 * 10 ms and, given the xDS port, a CDS request on a new ADS stream every 20 ms. It runs in a
 * child process so the test runner's own pauses (its garbage collection, other tests' work)
 * are not taken for the daemon's.
 */
export async function startLatencyProbe(httpPort: number, grpcPort?: number): Promise<RunningProbe> {
  const child = spawn(process.execPath, [__filename, String(httpPort), String(grpcPort ?? 0)], { stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  let onOutput = () => {};
  child.stdout!.on('data', (d) => {
    out += d;
    onOutput();
  });
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  // Started once warmed up and probing (loading the xDS protos takes the child a moment).
  await new Promise<void>((resolve, reject) => {
    onOutput = () => out.startsWith(STARTED) && resolve();
    void exited.then(() => reject(new Error(`latency probe exited before starting: ${out}`)));
  });
  return {
    async stop() {
      child.stdin!.end();
      await exited;
      clearTimeout(timer);
      return JSON.parse(out.slice(STARTED.length)) as ProbeReport;
    },
  };
}

const STARTED = 'probing\n';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function getReady(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/ready', agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.setTimeout(5000, () => req.destroy(new Error('GET /ready timed out')));
  });
}

async function probe(httpPort: number, grpcPort: number): Promise<void> {
  const report: ProbeReport = { ready: [], xds: [], failures: [] };
  const ready = async () => {
    const started = performance.now();
    const status = await getReady(httpPort).catch((err: Error) => err.message);
    report.ready.push(performance.now() - started);
    if (status !== 200) report.failures.push(`/ready: ${status}`);
  };
  const xds = async () => {
    const started = performance.now();
    const client = new SotwClient(grpcPort, sidecarNode('10.8.14.99', 'foo'));
    try {
      client.send({ type_url: 'type.googleapis.com/envoy.config.cluster.v3.Cluster' });
      await client.next();
      report.xds.push(performance.now() - started);
    } catch (err) {
      report.failures.push(`xDS: ${(err as Error).message}`);
    } finally {
      client.close();
    }
  };
  // Warm up first: the first request of each kind pays for this process's own start.
  await ready();
  if (grpcPort) await xds();
  Object.assign(report, { ready: [], xds: [] });

  let running = true;
  process.stdin.on('end', () => (running = false)).resume();
  const readyLoop = (async () => {
    while (running) {
      await ready();
      await sleep(10);
    }
  })();
  const xdsLoop = (async () => {
    while (running && grpcPort) {
      await xds();
      await sleep(20);
    }
  })();
  process.stdout.write(STARTED);
  await Promise.all([readyLoop, xdsLoop]);
  process.stdout.write(JSON.stringify(report));
  process.exit(0);
}

if (require.main === module) void probe(Number(process.argv[2]), Number(process.argv[3]));

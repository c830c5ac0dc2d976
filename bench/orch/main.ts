/**
 * Orchestrator benchmark (see bench/README.md): N Services with E endpoints each in the
 * in-process API server (Services, Pods with IPs, EndpointSlices), the daemon on it with
 * `--orchconfig`, and an ADS client watching one service's endpoints. Measures the daemon's
 * time to ready (list of everything), the time from an EndpointSlice write to the client
 * holding the new endpoints, and the daemon's RSS.
 *
 *   npm run bench:orch -- --services 1000 --endpoints 10 [--rounds 10] [--json]
 */
import { execFileSync } from 'node:child_process';
import { resourcesOf, sidecarNode, SotwClient } from '../../test/helpers/ads-client';
import { RunningDaemon } from '../../test/helpers/daemon';
import { OrchWorld, startOrchDaemon, startOrchWorld } from '../../test/helpers/orch-mesh';

const CDS = 'type.googleapis.com/envoy.config.cluster.v3.Cluster';
const LDS = 'type.googleapis.com/envoy.config.listener.v3.Listener';
const EDS = 'type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment';
const NAMESPACE = 'bench';

interface Options {
  services: number;
  endpoints: number;
  rounds: number;
  json: boolean;
}

const USAGE = `usage: npm run bench:orch -- [--services N] [--endpoints E] [--rounds R] [--json]

  --services N   Services in the API server (default 1000)
  --endpoints E  endpoints (pods) per Service (default 10)
  --rounds R     endpoint changes to time (default 10)
  --json         print the results as JSON

Daemon settings come from the environment as usual (the bench sets PILOT_DEBOUNCE_AFTER=20ms
unless given).`;

function parseOptions(argv: string[]): Options {
  const o: Options = { services: 1000, endpoints: 10, rounds: 10, json: false };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    if (flag === '--help' || flag === '-h') {
      console.log(USAGE);
      process.exit(0);
    } else if (flag === '--json') o.json = true;
    else if (flag === '--services' || flag === '--endpoints' || flag === '--rounds') {
      const v = Number(argv[++i]);
      if (!Number.isInteger(v) || v < 1) throw new Error(`${flag} needs a positive integer, got ${argv[i]}`);
      o[flag.slice(2) as 'services' | 'endpoints' | 'rounds'] = v;
    } else throw new Error(`unknown option ${flag}\n\n${USAGE}`);
  }
  if (o.services * o.endpoints > 250_000) throw new Error('--services × --endpoints: at most 250000 pods');
  return o;
}

const ipOf = (service: number, endpoint: number) => `10.${128 + ((service >> 8) & 127)}.${service & 255}.${endpoint + 1}`;

/** The world: N Services, each with E pods and one EndpointSlice naming them. */
async function populate(world: OrchWorld, o: Options): Promise<void> {
  const s = world.server;
  await s.create({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-1', labels: { 'topology.kubernetes.io/region': 'r1', 'topology.kubernetes.io/zone': 'z1' } } });
  for (let i = 0; i < o.services; i++) {
    await s.create({ apiVersion: 'v1', kind: 'Service', metadata: { name: `svc-${i}`, namespace: NAMESPACE }, spec: { selector: { app: `app-${i}` }, ports: [{ name: 'http', port: 80, targetPort: 8080 }] } });
    const endpoints = [];
    for (let j = 0; j < o.endpoints; j++) {
      const ip = ipOf(i, j);
      const name = `app-${i}-${j}`;
      const pod = await s.create({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: NAMESPACE, labels: { app: `app-${i}` } }, spec: { nodeName: 'node-1', serviceAccountName: `sa-${i}`, containers: [{ name: 'app', image: 'app' }] } });
      await s.update({ ...pod, status: { phase: 'Running', podIP: ip, podIPs: [{ ip }] } });
      endpoints.push({ addresses: [ip], conditions: { ready: true }, targetRef: { kind: 'Pod', name, namespace: NAMESPACE }, nodeName: 'node-1' });
    }
    await s.create({
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: `svc-${i}-slice`, namespace: NAMESPACE, labels: { 'kubernetes.io/service-name': `svc-${i}` } },
      addressType: 'IPv4',
      endpoints,
      ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
    });
  }
}

function rssMiB(daemon: RunningDaemon): number {
  return Number(execFileSync('ps', ['-o', 'rss=', '-p', String(daemon.process.pid)]).toString().trim()) / 1024;
}

function endpointCount(response: Record<string, unknown>): number {
  return resourcesOf(response).flatMap((cla) => ((cla.endpoints ?? []) as Array<{ lb_endpoints?: unknown[] }>).flatMap((l) => l.lb_endpoints ?? [])).length;
}

async function main(): Promise<void> {
  const o = parseOptions(process.argv.slice(2));
  const log = (msg: string) => process.stderr.write(`${msg}\n`);
  const world = await startOrchWorld({ simulateCluster: false, namespaces: [NAMESPACE] });
  let daemon: RunningDaemon | undefined;
  let client: SotwClient | undefined;
  try {
    let t = performance.now();
    await populate(world, o);
    log(`populated ${o.services} services × ${o.endpoints} endpoints in ${((performance.now() - t) / 1000).toFixed(1)} s`);
    t = performance.now();
    daemon = await startOrchDaemon(world, [], { PILOT_DEBOUNCE_AFTER: process.env.PILOT_DEBOUNCE_AFTER ?? '20ms' });
    const readySeconds = (performance.now() - t) / 1000;
    const rssReady = rssMiB(daemon);
    log(`daemon ready in ${readySeconds.toFixed(2)} s, RSS ${rssReady.toFixed(0)} MiB`);

    const watched = Math.floor(o.services / 2);
    const cluster = `outbound|80||svc-${watched}.${NAMESPACE}.svc.cluster.local`;
    client = new SotwClient(daemon.grpcPort, sidecarNode('10.99.0.1', NAMESPACE));
    client.send({ type_url: CDS });
    client.ack(await client.next(CDS, 60_000));
    client.send({ type_url: LDS });
    client.ack(await client.next(LDS, 60_000));
    client.send({ type_url: EDS, resource_names: [cluster] });
    const first = await client.next(EDS, 60_000);
    client.ack(first, [cluster]);
    if (endpointCount(first) !== o.endpoints) throw new Error(`expected ${o.endpoints} endpoints for ${cluster}, got ${endpointCount(first)}`);

    // Each round drops or restores the last endpoint of the watched service's slice.
    const full = world.server.get('discovery.k8s.io/v1', 'EndpointSlice', NAMESPACE, `svc-${watched}-slice`).endpoints;
    const convergence: number[] = [];
    for (let round = 0; round < o.rounds; round++) {
      const slice = world.server.get('discovery.k8s.io/v1', 'EndpointSlice', NAMESPACE, `svc-${watched}-slice`);
      const next = round % 2 === 0 ? full.slice(0, -1) : full;
      const started = performance.now();
      await world.server.update({ ...slice, endpoints: next });
      for (;;) {
        const r = await client.next(EDS, 30_000);
        client.ack(r, [cluster]);
        if (endpointCount(r) === next.length) break;
      }
      convergence.push(performance.now() - started);
      await new Promise((r) => setTimeout(r, 200));
    }
    const rssAfter = rssMiB(daemon);
    const sorted = [...convergence].sort((a, b) => a - b);
    const q = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
    const result = {
      services: o.services,
      endpointsPerService: o.endpoints,
      readySeconds: Number(readySeconds.toFixed(3)),
      endpointChangeToProxyMs: { p50: Number(q(0.5).toFixed(1)), p90: Number(q(0.9).toFixed(1)), max: Number(sorted[sorted.length - 1].toFixed(1)), rounds: o.rounds },
      daemonRssMiB: { ready: Math.round(rssReady), end: Math.round(rssAfter) },
    };
    if (o.json) console.log(JSON.stringify(result, null, 2));
    else {
      console.log(`services × endpoints         ${o.services} × ${o.endpoints}`);
      console.log(`daemon ready (list + sync)   ${result.readySeconds} s`);
      console.log(`endpoint change → proxy      p50 ${result.endpointChangeToProxyMs.p50} ms, p90 ${result.endpointChangeToProxyMs.p90} ms, max ${result.endpointChangeToProxyMs.max} ms (${o.rounds} rounds)`);
      console.log(`daemon RSS                   ${result.daemonRssMiB.ready} MiB when ready, ${result.daemonRssMiB.end} MiB at the end`);
    }
  } finally {
    client?.close();
    await daemon?.stop();
    await world.close();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(`bench:orch failed: ${(err as Error).message}\n`);
    process.exit(1);
  },
);

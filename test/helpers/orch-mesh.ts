import { execFile } from 'node:child_process';
import * as https from 'node:https';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { RunningDaemon, startDaemon } from './daemon';
import { httpGet, metricValue } from './http';
import { NODE_NAME, OrchApiServer, startOrchApiServer, StartOptions } from './orch-api';
import { REPO_ROOT } from './run-cli';

export const CRD_DIR = path.join(REPO_ROOT, 'manifests', 'crds');

/** The real kubectl against `kubeconfig`; `input` goes to its stdin. */
export function kubectl(kubeconfig: string, args: string[], input?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile('kubectl', ['--kubeconfig', kubeconfig, ...args], { timeout: 20_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
    if (input !== undefined) child.stdin!.end(input);
  });
}

/** An API server with the mesh's CRDs installed (with kubectl, as an operator would) and its kubeconfig file. */
export interface OrchWorld {
  server: OrchApiServer;
  dir: string;
  kubeconfig: string;
  /** `kubectl apply -f -` of `yaml`; throws with kubectl's message when it fails. */
  apply(yaml: string): Promise<string>;
  close(): Promise<void>;
}

export async function startOrchWorld(options: StartOptions & { namespaces?: string[] } = {}): Promise<OrchWorld> {
  const server = await startOrchApiServer({ bookmarkIntervalMs: 500, ...options });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-orch-'));
  const kubeconfig = server.writeKubeconfigFile(dir);
  const apply = async (yaml: string) => {
    const r = await kubectl(kubeconfig, ['apply', '-f', '-'], yaml);
    if (r.code !== 0) throw new Error(`kubectl apply failed: ${r.stderr}`);
    return r.stdout;
  };
  const crds = await kubectl(kubeconfig, ['apply', '-f', CRD_DIR]);
  if (crds.code !== 0) throw new Error(`kubectl apply -f manifests/crds failed: ${crds.stderr}`);
  for (const ns of options.namespaces ?? []) await apply(`apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${ns}\n`);
  return {
    server,
    dir,
    kubeconfig,
    apply,
    close: async () => {
      await server.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The daemon on the world's API server (`--orchconfig`), quick to push. */
export function startOrchDaemon(world: OrchWorld, args: string[] = [], env: Record<string, string> = {}): Promise<RunningDaemon> {
  return startDaemon(['--orchconfig', world.kubeconfig, ...args], { PILOT_DEBOUNCE_AFTER: '20ms', PILOT_DEBOUNCE_MAX: '200ms', ...env });
}

/** The daemon's metrics now. */
export async function daemonMetrics(daemon: RunningDaemon): Promise<string> {
  return (await httpGet(daemon.monitoringPort, '/metrics')).body;
}

export async function daemonMetric(daemon: RunningDaemon, name: string, labels: Record<string, string> = {}): Promise<number> {
  return metricValue(await daemonMetrics(daemon), name, labels);
}

/** Polls `probe` until `accept` holds or `ms` pass; resolves with the last value, throws naming `what`. */
export async function waitFor<T>(probe: () => Promise<T> | T, accept: (v: T) => boolean, what: string, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  let last = await probe();
  while (!accept(last)) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(last)?.slice(0, 500)}`);
    await new Promise((r) => setTimeout(r, 50));
    last = await probe();
  }
  return last;
}

let podSerial = 0;

/** A pod to put on the in-process API server with `runPod`. */
export interface RunPodOptions {
  name: string;
  /** Default `default`; created when missing. */
  namespace?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  /**
   * A Deployment the pod belongs to: created when missing (0 replicas, so its controller makes
   * no pods of its own) with a selector of the pod's labels (`app: <deployment>` added when the
   * pod has none), so `deployment/<name>` resolves to this pod.
   */
  deployment?: string;
  /** Pod port -> where it really is: `{host, port}` or a port on 127.0.0.1 (registered for port-forward). */
  ports?: Record<number, { host: string; port: number } | number>;
  /** Default true: the Ready condition is True. */
  ready?: boolean;
  /** Default `Running`. */
  phase?: string;
  /** Containers (default one named `app` exposing the ports). */
  containers?: unknown[];
  /** The node the pod runs on (default the test node). */
  nodeName?: string;
}

/**
 * Creates a pod that is scheduled and in `phase` (Running by default) at once, with the API
 * server's direct access, and registers its ports for port-forward. Returns the pod as stored.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function runPod(server: OrchApiServer, options: RunPodOptions): Promise<any> {
  const namespace = options.namespace ?? 'default';
  if (!server.get('v1', 'Namespace', undefined, namespace)) await server.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
  const labels = { ...(options.labels ?? {}) };
  if (options.deployment && Object.keys(labels).length === 0) labels.app = options.deployment;
  if (options.deployment && !server.get('apps/v1', 'Deployment', namespace, options.deployment)) {
    await server.create({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: options.deployment, namespace },
      spec: { replicas: 0, selector: { matchLabels: labels }, template: { metadata: { labels }, spec: { containers: [{ name: 'app', image: 'app:test' }] } } },
    });
  }
  const ports = Object.keys(options.ports ?? {}).map(Number);
  const containers = options.containers ?? [{ name: 'app', image: 'app:test', ports: ports.map((containerPort) => ({ containerPort, protocol: 'TCP' })) }];
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const phase = options.phase ?? 'Running';
  const ready = (options.ready ?? true) && phase === 'Running';
  podSerial++;
  const podIP = `10.244.200.${podSerial % 250 || 250}`;
  // Bound and with a pod IP already, so the simulated kubelet leaves the status as given.
  const pod = await server.create({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: options.name, namespace, labels, ...(options.annotations ? { annotations: options.annotations } : {}) },
    spec: { nodeName: options.nodeName ?? NODE_NAME, containers },
    status: {
      phase,
      podIP,
      podIPs: [{ ip: podIP }],
      hostIP: '127.0.0.1',
      startTime: now,
      conditions: [
        { type: 'PodScheduled', status: 'True', lastTransitionTime: now },
        { type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: now },
      ],
      containerStatuses: (containers as { name: string; image?: string }[]).map((c) => ({
        name: c.name,
        image: c.image ?? '',
        imageID: '',
        ready,
        restartCount: 0,
        started: phase === 'Running',
        state: phase === 'Running' ? { running: { startedAt: now } } : { waiting: { reason: 'ContainerCreating' } },
      })),
    },
  });
  for (const [podPort, target] of Object.entries(options.ports ?? {})) {
    server.portForward.register(namespace, options.name, Number(podPort), typeof target === 'number' ? { host: '127.0.0.1', port: target } : target);
  }
  return pod;
}

/** The issuer of the in-process API server's service account tokens. */
export const ORCH_TOKEN_ISSUER = 'https://kubernetes.default.svc.cluster.local';

/**
 * JWT_RULE for a daemon that checks orchestrator tokens (proxies', meshctl's) with the API
 * server's own signing keys, as it would on a cluster.
 */
export function orchTokenJwtRule(server: OrchApiServer): Promise<string> {
  return new Promise((resolve, reject) => {
    https
      .get(`${server.url}/openid/v1/jwks`, { ca: server.caPem, headers: { authorization: `Bearer ${server.token}` } }, (res) => {
        let body = '';
        res.on('data', (d) => (body += d));
        res.on('end', () => (res.statusCode === 200 ? resolve(JSON.stringify({ issuer: ORCH_TOKEN_ISSUER, jwks: body })) : reject(new Error(`/openid/v1/jwks: ${res.statusCode} ${body}`))));
      })
      .on('error', reject);
  });
}

import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { RunningDaemon, startDaemon } from './daemon';
import { httpGet, metricValue } from './http';
import { OrchApiServer, startOrchApiServer, StartOptions } from './orch-api';
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

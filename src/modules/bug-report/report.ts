import type * as k8s from '@kubernetes/client-node';
import { orchLibrary } from '../orch';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { stringify } from 'yaml';
import { apiErrorMessage } from '../orch';
import type { OrchAccess } from '../orch-access';
import { UserError } from '../shared/user-error';
import { Limiter } from './limiter';
import { byPriority, linesUntil, rankLog, RankedLog } from './logs';
import type { BugReportOptions } from './options';
import { DeploymentJson, LogTarget, planPods, PodJson, PodPlan } from './plan';
import { redactSecret } from './redact';
import { tarGz } from './tar';

/** Where a run reports: a progress line (terminal only), summary lines (stderr), results (stdout). */
export interface BugReportOutput {
  progress(text: string): void;
  summary(line: string): void;
  result(line: string): void;
}

/** One thing to fetch and the archive file it becomes. */
interface Item {
  /** Path inside the archive's `bug-report/` folder. */
  path: string;
  /** What is fetched, for --dry-run and errors. */
  what: string;
  fetch: () => Promise<string>;
  /** A log, ranked by its errors. */
  log?: boolean;
}

export const ARCHIVE_ROOT = 'bug-report';
export const ARCHIVE_NAME = 'bug-report.tar.gz';
/** The daemon's debug endpoints gathered (on its HTTP port). */
export const DAEMON_DEBUG_PORT = 8080;
export const DAEMON_DEBUG_PATHS = ['syncz', 'configz', 'registryz'] as const;
export const PROXY_ADMIN_PORT = 15000;

/** The orchestrator collections gathered: the mesh namespace's core kinds, namespaces and webhook configurations. */
const NAMESPACED_CORE = [
  { plural: 'services', base: '/api/v1' },
  { plural: 'deployments', base: '/apis/apps/v1' },
  { plural: 'pods', base: '/api/v1' },
  { plural: 'configmaps', base: '/api/v1' },
  { plural: 'secrets', base: '/api/v1' },
] as const;
const CLUSTER_WIDE = [
  { plural: 'namespaces', base: '/api/v1' },
  { plural: 'mutatingwebhookconfigurations', base: '/apis/admissionregistration.k8s.io/v1' },
  { plural: 'validatingwebhookconfigurations', base: '/apis/admissionregistration.k8s.io/v1' },
] as const;
/** API groups of the mesh's custom resources. */
const MESH_GROUP = /(^|\.)mesh\.io$/;

/**
 * `meshctl bug-report`: plans what to gather (versions, resources, logs, proxy config dumps,
 * daemon debug output), fetches it with at most `options.concurrency` requests in flight,
 * stages each file under `--dir`, and writes `bug-report.tar.gz` to `--output-dir`. When
 * `--timeout` passes, what was gathered by then is archived and the summary says so. With
 * `--dry-run` it lists what it would gather and writes nothing. Returns the archive's path.
 */
export async function runBugReport(access: OrchAccess, options: BugReportOptions, out: BugReportOutput): Promise<string | undefined> {
  const started = Date.now();
  const deadline = started + options.timeoutMs;
  const limiter = new Limiter(options.concurrency);
  const plan = await withDeadline(deadline, () => planGathering(access, options, limiter));
  if (plan === TIMED_OUT) throw new UserError(`bug-report: --timeout of ${options.timeoutMs / 1000}s passed while listing the cluster's pods; nothing was gathered`);
  const items = [...clusterItems(access, options), ...podItems(access, options, plan.pods)];
  if (options.dryRun) {
    for (const item of items) out.result(`would gather ${item.what} into ${ARCHIVE_ROOT}/${item.path}`);
    out.result(`would write ${path.join(options.outputDir, ARCHIVE_NAME)}`);
    return undefined;
  }

  const stageParent = options.dir ?? os.tmpdir();
  let stage: string;
  try {
    fs.mkdirSync(stageParent, { recursive: true });
    stage = fs.mkdtempSync(path.join(stageParent, 'bug-report-'));
  } catch (err) {
    throw new UserError(`cannot create a temporary folder in --dir ${stageParent}: ${(err as Error).message}`);
  }
  try {
    out.summary(`Gathering ${items.length} items (${plan.pods.daemonPods.length} daemon pods, ${plan.pods.proxyPods.length} proxies, ${plan.pods.logs.length} container logs) with up to ${options.concurrency} requests at once`);
    const gathered = new Map<string, string>();
    const errors: string[] = [];
    let closed = false;
    let done = 0;
    const progress = () => out.progress(`gathered ${done}/${items.length}`);
    progress();
    const work = Promise.all(
      items.map((item) =>
        limiter
          .run(async () => {
            if (closed) return;
            const text = await item.fetch();
            if (closed) return;
            fs.mkdirSync(path.join(stage, path.dirname(item.path)), { recursive: true });
            fs.writeFileSync(path.join(stage, item.path), text);
            gathered.set(item.path, item.path);
          })
          .catch((err) => {
            if (!closed) errors.push(`${item.what}: ${describe(err)}`);
          })
          .finally(() => {
            done++;
            progress();
          }),
      ),
    );
    const finished = await withDeadline(deadline, () => work);
    closed = true;
    const timedOut = finished === TIMED_OUT;
    const missing = items.filter((i) => !gathered.has(i.path));

    // The archive: summary first, then logs with the most critical errors, then the rest in plan order.
    const ranked: RankedLog[] = items
      .filter((i) => i.log && gathered.has(i.path))
      .map((i) => rankLog(i.path, fs.readFileSync(path.join(stage, i.path), 'utf8'), options.criticalErrs, options.ignoreErrs))
      .sort(byPriority);
    const order = [...ranked.map((r) => r.path), ...items.filter((i) => !i.log && gathered.has(i.path)).map((i) => i.path)];
    const summary = {
      started: new Date(started).toISOString(),
      logWindow: { from: options.since?.toISOString() ?? 'start of each log', to: options.until.toISOString() },
      complete: !timedOut && errors.length === 0,
      ...(timedOut ? { timedOut: `--timeout of ${options.timeoutMs / 1000}s passed; ${missing.length} of ${items.length} items were not gathered`, notGathered: missing.map((i) => i.what) } : {}),
      errors,
      logsByPriority: ranked.map((r) => ({ path: `${ARCHIVE_ROOT}/${r.path}`, criticalErrors: r.critical, errors: r.errors })),
    };
    const entries = [
      { path: `${ARCHIVE_ROOT}/summary.yaml`, data: Buffer.from(stringify(summary)) },
      ...order.map((p) => ({ path: `${ARCHIVE_ROOT}/${p}`, data: fs.readFileSync(path.join(stage, p)) })),
    ];
    const archive = path.join(options.outputDir, ARCHIVE_NAME);
    try {
      fs.mkdirSync(options.outputDir, { recursive: true });
      fs.writeFileSync(archive, tarGz(entries));
    } catch (err) {
      throw new UserError(`cannot write the archive ${archive}: ${(err as Error).message}`);
    }
    if (timedOut) out.summary(`Timed out after ${options.timeoutMs / 1000}s (--timeout): archived the ${gathered.size} of ${items.length} items gathered so far`);
    else out.summary(`Gathered ${gathered.size} of ${items.length} items${errors.length ? `; ${errors.length} failed (listed in ${ARCHIVE_ROOT}/summary.yaml)` : ''}`);
    out.result(`Wrote ${archive}`);
    return archive;
  } finally {
    fs.rmSync(stage, { recursive: true, force: true });
  }
}

const TIMED_OUT = Symbol('timed out');

async function withDeadline<T>(deadline: number, work: () => Promise<T>): Promise<T | typeof TIMED_OUT> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<typeof TIMED_OUT>((resolve) => (timer = setTimeout(() => resolve(TIMED_OUT), Math.max(0, deadline - Date.now()))));
  try {
    return await Promise.race([work(), expired]);
  } finally {
    clearTimeout(timer);
  }
}

async function planGathering(access: OrchAccess, options: BugReportOptions, limiter: Limiter): Promise<{ pods: PodPlan }> {
  const list = async <T>(p: string): Promise<T[]> => {
    try {
      return ((await limiter.run(() => access.client.getJson(p))) as { items?: T[] }).items ?? [];
    } catch (err) {
      throw new UserError(`bug-report: cannot list ${p}: ${apiErrorMessage(err)}`);
    }
  };
  const [pods, deployments] = await Promise.all([list<PodJson>('/api/v1/pods'), list<DeploymentJson>('/apis/apps/v1/deployments')]);
  return { pods: planPods(pods, deployments, options) };
}

/** Versions and the resources of the mesh's kinds, as YAML. */
function clusterItems(access: OrchAccess, options: BugReportOptions): Item[] {
  const client = access.client;
  const listYaml = async (p: string, kind: string, apiVersion: string) => {
    const list = (await client.getJson(p)) as { items?: Record<string, unknown>[] };
    let items: Record<string, unknown>[] = (list.items ?? []).map((o) => ({ apiVersion, kind, ...o }));
    if (kind === 'Secret' && !options.fullSecrets) items = items.map((s) => redactSecret(s as Parameters<typeof redactSecret>[0]));
    return items.map((o) => stringify(o)).join('---\n');
  };
  const ns = encodeURIComponent(options.meshNamespace);
  const items: Item[] = [
    { path: 'versions.yaml', what: 'the orchestrator and mesh versions', fetch: () => versions(access, options) },
    ...NAMESPACED_CORE.map((k) => ({
      path: `cluster/${options.meshNamespace}/${k.plural}.yaml`,
      what: `${k.plural} of namespace ${options.meshNamespace}`,
      fetch: () => listYaml(`${k.base}/namespaces/${ns}/${k.plural}`, KINDS[k.plural], k.base.replace(/^\/apis?\//, '')),
    })),
    ...CLUSTER_WIDE.map((k) => ({
      path: `cluster/${k.plural}.yaml`,
      what: k.plural,
      fetch: () => listYaml(`${k.base}/${k.plural}`, KINDS[k.plural], k.base.replace(/^\/apis?\//, '')),
    })),
    {
      path: 'cluster/mesh-resources.yaml',
      what: 'the mesh custom resources of every namespace',
      fetch: async () => {
        const crds = ((await client.getJson('/apis/apiextensions.k8s.io/v1/customresourcedefinitions')) as { items?: k8s.V1CustomResourceDefinition[] }).items ?? [];
        const docs: string[] = [];
        for (const crd of crds.filter((c) => MESH_GROUP.test(c.spec.group)).sort((a, b) => a.metadata!.name!.localeCompare(b.metadata!.name!))) {
          const version = crd.spec.versions.find((v) => v.storage)?.name ?? crd.spec.versions[0]?.name;
          if (!version) continue;
          const text = await listYaml(`/apis/${crd.spec.group}/${version}/${crd.spec.names.plural}`, crd.spec.names.kind, `${crd.spec.group}/${version}`);
          if (text) docs.push(text);
        }
        return docs.join('---\n');
      },
    },
  ];
  return items;
}

const KINDS: Record<string, string> = {
  services: 'Service',
  deployments: 'Deployment',
  pods: 'Pod',
  configmaps: 'ConfigMap',
  secrets: 'Secret',
  namespaces: 'Namespace',
  mutatingwebhookconfigurations: 'MutatingWebhookConfiguration',
  validatingwebhookconfigurations: 'ValidatingWebhookConfiguration',
};

/** The orchestrator's `/version` and, per daemon pod, its images, labels and its own `/debug/version` when it answers. */
async function versions(access: OrchAccess, options: BugReportOptions): Promise<string> {
  const cluster = await access.client.getJson('/version').catch((err) => ({ error: apiErrorMessage(err) }));
  const pods = ((await access.client.getJson(`/api/v1/namespaces/${encodeURIComponent(options.meshNamespace)}/pods`, { labelSelector: 'app=meshd' })) as { items?: PodJson[] }).items ?? [];
  const mesh = await Promise.all(
    pods.map(async (pod) => {
      let debugVersion: unknown;
      try {
        const answer = await access.forwarder.request(pod as k8s.V1Pod, DAEMON_DEBUG_PORT, { path: '/debug/version', timeoutMs: 10_000 });
        debugVersion = answer.status === 200 ? JSON.parse(answer.body.toString()) : `answered ${answer.status}`;
      } catch (err) {
        debugVersion = `not reachable: ${describe(err)}`;
      }
      return {
        pod: `${pod.metadata.namespace}/${pod.metadata.name}`,
        images: (pod.spec?.containers ?? []).map((c) => `${c.name}=${c.image ?? ''}`),
        labels: pod.metadata.labels ?? {},
        debugVersion,
      };
    }),
  );
  return stringify({ orchestrator: cluster, mesh });
}

/** Logs of the selected containers, proxies' config dumps and the daemon's debug output. */
function podItems(access: OrchAccess, options: BugReportOptions, plan: PodPlan): Item[] {
  const items: Item[] = [];
  const dir = (role: string, pod: PodJson) => `${role}/${pod.metadata.namespace}/${pod.metadata.name}`;
  for (const target of plan.logs) {
    const name = `${target.container} of pod ${target.pod.metadata.namespace}/${target.pod.metadata.name}`;
    items.push({ path: `${dir(target.role, target.pod)}/${target.container}.log`, what: `the log of ${name}`, fetch: () => podLog(access, options, target, false), log: true });
    if (target.previous) items.push({ path: `${dir(target.role, target.pod)}/${target.container}.previous.log`, what: `the previous log of ${name}`, fetch: () => podLog(access, options, target, true), log: true });
  }
  const podHttp = async (pod: PodJson, port: number, p: string) => {
    const answer = await access.forwarder.request(pod as k8s.V1Pod, port, { path: p });
    if (answer.status !== 200) throw new Error(`answered ${answer.status}: ${answer.body.toString().split('\n')[0].slice(0, 200)}`);
    return answer.body.toString();
  };
  for (const pod of plan.proxyPods) {
    items.push({ path: `${dir('proxies', pod)}/config_dump.json`, what: `the config dump of the proxy admin (port ${PROXY_ADMIN_PORT}) of pod ${pod.metadata.namespace}/${pod.metadata.name}`, fetch: () => podHttp(pod, PROXY_ADMIN_PORT, '/config_dump') });
  }
  for (const pod of plan.daemonPods) {
    for (const name of DAEMON_DEBUG_PATHS) {
      items.push({ path: `${dir('daemon', pod)}/debug/${name}.json`, what: `/debug/${name} of daemon pod ${pod.metadata.namespace}/${pod.metadata.name} (port ${DAEMON_DEBUG_PORT})`, fetch: () => podHttp(pod, DAEMON_DEBUG_PORT, `/debug/${name}`) });
    }
  }
  return items;
}

/** A container's log within the window: from `since` (sinceSeconds, as the client offers no sinceTime) up to `until` (by the lines' timestamps). */
async function podLog(access: OrchAccess, options: BugReportOptions, target: LogTarget, previous: boolean): Promise<string> {
  const sinceSeconds = options.since ? Math.max(1, Math.ceil((Date.now() - options.since.getTime()) / 1000)) : undefined;
  const text = await access.client.api(orchLibrary().CoreV1Api).readNamespacedPodLog({
    name: target.pod.metadata.name,
    namespace: target.pod.metadata.namespace,
    container: target.container,
    previous,
    sinceSeconds,
    timestamps: true,
  });
  return linesUntil(text, options.until);
}

function describe(err: unknown): string {
  return apiErrorMessage(err).split('\n')[0];
}

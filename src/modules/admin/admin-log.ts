import type * as k8s from '@kubernetes/client-node';
import { ScopeInfo } from '../ctrlz/scope-info';
import { UserError } from '../shared/user-error';
import { REVISION_LABEL } from '../webhook';
import { ControlzClient } from './controlz-client';
import { changesFor, parseScopeLevels, resetChanges, ScopeChanges, ScopeLevels } from './level-flags';
import { renderScopeLevels, ScopeOutputFormat, scopeRows } from './scope-output';

/** What `admin log` needs of the orchestrator (the reach layer's OrchAccess has this shape). */
export interface DaemonPodAccess {
  resolvePod(target: string, namespace: string): Promise<k8s.V1Pod>;
  podsBySelector(namespace: string, selector: string): Promise<k8s.V1Pod[]>;
  forwarder: {
    request(pod: k8s.V1Pod, port: number, request: { method?: string; path: string; body?: string; headers?: Record<string, string> }): Promise<{ status: number; body: Buffer }>;
  };
}

export interface AdminLogOptions {
  /** `[<pod-name>]`: this daemon pod only. */
  pod?: string;
  /** Where the daemon pods are (`-n`, else `--meshNamespace`). */
  namespace: string;
  /** `--selector`/`-l`. */
  selector: string;
  /** `--revision`/`-r`: only that revision's daemons. */
  revision?: string;
  ctrlzPort: number;
  level?: string;
  stackTraceLevel?: string;
  reset: boolean;
  output: ScopeOutputFormat;
  /** Told what is being waited for (the command shows it on a terminal). */
  progress?: (message: string) => void;
}

/** The pods `admin log` addresses: the one named, or those the selector (and revision) pick. */
export function daemonSelector(selector: string, revision?: string): string {
  const parts = [selector.trim(), revision ? `${REVISION_LABEL}=${revision}` : ''].filter((p) => p !== '');
  return parts.join(',');
}

/**
 * `meshctl admin log`: shows each daemon's logging scopes, or changes them. Flags are checked
 * first, then every daemon's scopes are read and every change checked against them, and only
 * then is anything changed, so a mistake changes nothing anywhere. Resolves with the output.
 */
export async function adminLog(access: DaemonPodAccess, options: AdminLogOptions): Promise<string> {
  if (options.reset && (options.level !== undefined || options.stackTraceLevel !== undefined)) {
    throw new UserError('--reset cannot be combined with --level or --stack-trace-level');
  }
  const output = options.level !== undefined ? parseScopeLevels('--level', options.level) : undefined;
  const stackTrace = options.stackTraceLevel !== undefined ? parseScopeLevels('--stack-trace-level', options.stackTraceLevel) : undefined;
  const changing = options.reset || output !== undefined || stackTrace !== undefined;

  const pods = await findDaemonPods(access, options);
  const daemons: Array<{ pod: string; client: ControlzClient; scopes: ScopeInfo[] }> = [];
  for (const pod of pods) {
    const name = `${pod.metadata!.name}.${pod.metadata!.namespace}`;
    const client = new ControlzClient((req) => access.forwarder.request(pod, options.ctrlzPort, req), `pod ${name} port ${options.ctrlzPort}`);
    options.progress?.(`reading the logging scopes of ${name}...`);
    daemons.push({ pod: name, client, scopes: await client.scopes() });
  }
  if (!changing) return renderScopeLevels(daemons.map((d) => ({ pod: d.pod, rows: scopeRows(d.scopes) })), options.output);

  const planned = daemons.map((d) => ({ ...d, changes: plan(d.scopes, options.reset, output, stackTrace, `pod ${d.pod}`) }));
  const results: Array<{ pod: string; rows: ReturnType<typeof scopeRows> }> = [];
  for (const d of planned) {
    options.progress?.(`changing ${d.changes.size} scope(s) of ${d.pod}...`);
    const now: ScopeInfo[] = [];
    for (const [scope, update] of d.changes) now.push(await d.client.update(scope, update));
    results.push({ pod: d.pod, rows: scopeRows(now) });
  }
  return renderScopeLevels(results, options.output);
}

function plan(scopes: ScopeInfo[], reset: boolean, output: ScopeLevels | undefined, stackTrace: ScopeLevels | undefined, where: string): ScopeChanges {
  const names = scopes.map((s) => s.name);
  return reset ? resetChanges(names) : changesFor(names, output, stackTrace, where);
}

async function findDaemonPods(access: DaemonPodAccess, options: AdminLogOptions): Promise<k8s.V1Pod[]> {
  if (options.pod) return [await access.resolvePod(options.pod, options.namespace)];
  const selector = daemonSelector(options.selector, options.revision);
  if (!selector) throw new UserError('--selector is empty: name a daemon pod or give a label selector (default app=meshd)');
  options.progress?.(`looking for daemon pods (${selector}) in namespace ${options.namespace}...`);
  const pods = await access.podsBySelector(options.namespace, selector);
  if (pods.length === 0) throw new UserError(`no running daemon pods match ${JSON.stringify(selector)} in namespace ${options.namespace}`);
  return pods;
}

import type * as k8s from '@kubernetes/client-node';
import { UserError } from '../shared/user-error';

/** What picking a dashboard's pod needs of the orchestrator (the reach layer's OrchAccess has this shape). */
export interface PodLookup {
  resolvePod(target: string, namespace: string): Promise<k8s.V1Pod>;
  podsBySelector(namespace: string, selector: string): Promise<k8s.V1Pod[]>;
}

export interface DashboardPodOptions {
  /** `[<type>/]<name>[.<namespace>]` as given. */
  target?: string;
  /** `--selector`/`-l` when given. */
  selector?: string;
  /** Used when neither a pod nor a selector is given (the control plane's `app=meshd`); without one, one of them is required. */
  defaultSelector?: string;
  /** Where to look (`-n`, else the mesh namespace). */
  namespace: string;
  /** Told when several pods match and the first is used. */
  warn?: (message: string) => void;
}

/** The pod a dashboard opens: the one named, or the first running one the selector picks. */
export async function dashboardPod(access: PodLookup, options: DashboardPodOptions): Promise<k8s.V1Pod> {
  if (options.target && options.selector) throw new UserError('name cannot be provided when a selector is specified');
  if (options.target) return access.resolvePod(options.target, options.namespace);
  const selector = options.selector || options.defaultSelector;
  if (!selector) throw new UserError('specify a pod or --selector');
  const pods = await access.podsBySelector(options.namespace, selector);
  if (pods.length === 0) throw new UserError(`no running pods match ${JSON.stringify(selector)} in namespace ${options.namespace}`);
  if (pods.length > 1) options.warn?.(`more than one pod matches ${JSON.stringify(selector)}; using ${pods[0].metadata!.name}`);
  return pods[0];
}

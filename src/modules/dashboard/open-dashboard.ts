/**
 * Opening a dashboard: the pod (named, or the first running one a label selector matches), a
 * local listener forwarding to its UI port through the orchestrator API, then the shared runner
 * (URL, browser, serve until Ctrl-C).
 */
import type * as k8s from '@kubernetes/client-node';
import { listenPreferring, serveDashboard } from '../cli/dashboard-runner';
import { OrchAccess } from '../orch-access';
import { UserError } from '../shared/user-error';

export interface DashboardFlags {
  address: string;
  port: number;
  browser: boolean;
}

export interface PodChoice {
  /** `[<type>/]<name>[.<namespace>]`. */
  target?: string;
  selector?: string;
  /** Where to look when the target has no `.<namespace>`, and for the selector. */
  namespace: string;
  /** Says which pod was picked when several match. */
  warn: (message: string) => void;
}

/** The named pod, or the first running pod the selector matches (a warning when there are several). */
export async function dashboardPod(access: OrchAccess, choice: PodChoice, what = 'pods'): Promise<k8s.V1Pod> {
  if (choice.target !== undefined) return access.resolvePod(choice.target, choice.namespace);
  const selector = choice.selector!;
  const pods = await access.podsBySelector(choice.namespace, selector);
  if (pods.length === 0) throw new UserError(`no ${what} found: no running pod matches ${selector} in namespace ${choice.namespace}`);
  if (pods.length > 1) choice.warn(`more than 1 pods fits selector: ${selector}; will use pod: ${pods[0].metadata?.name}`);
  return pods[0];
}

/** Forwards a local port to `podPort` of `pod` and serves the dashboard until SIGINT or SIGTERM. */
export async function openDashboard(access: OrchAccess, pod: k8s.V1Pod, podPort: number, flags: DashboardFlags, path: string, out: (text: string) => void): Promise<void> {
  const forward = await listenPreferring((port) => access.forwarder.listen(pod, podPort, { address: flags.address, port }), flags.port, podPort);
  await serveDashboard(forward, { path, browser: flags.browser, out });
}

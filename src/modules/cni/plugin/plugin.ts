import type { V1Pod } from '@kubernetes/client-node';
import { captureConfigFrom, CaptureConfigError, captureRules, CommandRunner, IptablesApplier, parseSavedState, hasMeshState } from '../../iptables';
import { CniError, CniErrorCode, CniRequest, versionResult } from './cni-protocol';
import { PluginConfig } from './plugin-config';
import { annotationFor, redirectFor } from './pod-redirect';

export interface PluginDeps {
  /** The pod from the orchestrator API; throws CniError when it cannot be read. */
  fetchPod(namespace: string, name: string): Promise<V1Pod>;
  log(level: 'debug' | 'info' | 'warn' | 'error', message: string): void;
}

/**
 * One plug-in invocation. ADD applies the pod's capture rules inside its network namespace
 * and passes the previous plug-in's result on; every other case passes through untouched.
 * Returns what goes to stdout (undefined: nothing, as DEL and CHECK print on success).
 */
export async function runPlugin(request: CniRequest, config: PluginConfig, deps: PluginDeps): Promise<Record<string, unknown> | undefined> {
  switch (request.command) {
    case 'VERSION':
      return versionResult(config.cniVersion);
    case 'ADD':
      await add(request, config, deps);
      return { ...(config.prevResult ?? {}), cniVersion: config.cniVersion };
    case 'CHECK':
      await check(request, config, deps);
      return undefined;
    default:
      // DEL: the namespace and its rules go away with the pod. GC, STATUS: nothing is kept.
      return undefined;
  }
}

async function podOf(request: CniRequest, config: PluginConfig, deps: PluginDeps): Promise<V1Pod | undefined> {
  const name = request.args.get('K8S_POD_NAME');
  const namespace = request.args.get('K8S_POD_NAMESPACE');
  if (!name || !namespace) {
    deps.log('info', `container ${request.containerId}: no K8S_POD_NAME/K8S_POD_NAMESPACE in CNI_ARGS, not an orchestrator pod; passing through`);
    return undefined;
  }
  if (config.excludeNamespaces.includes(namespace)) {
    deps.log('info', `pod ${namespace}/${name}: namespace excluded; passing through`);
    return undefined;
  }
  return deps.fetchPod(namespace, name);
}

async function add(request: CniRequest, config: PluginConfig, deps: PluginDeps): Promise<void> {
  const pod = await podOf(request, config, deps);
  if (!pod) return;
  const id = `${pod.metadata?.namespace}/${pod.metadata?.name}`;
  const decision = redirectFor(pod);
  if (!decision.capture) {
    deps.log('info', `pod ${id}: ${decision.reason}; passing through`);
    return;
  }
  let captureConfig;
  try {
    captureConfig = captureConfigFrom(decision.input);
  } catch (err) {
    if (err instanceof CaptureConfigError) throw new CniError(CniErrorCode.InvalidAnnotation, `pod ${id}: ${annotationFor(err.message)}`);
    throw err;
  }
  const applier = new IptablesApplier(new CommandRunner(request.netns), (message) => deps.log('debug', `pod ${id}: ${message}`));
  try {
    // A retried ADD finds its own earlier rules; replacing them is the right outcome.
    await applier.apply(captureRules(captureConfig), captureConfig, { reconcile: true, forceApply: false });
  } catch (err) {
    throw new CniError(CniErrorCode.RedirectFailed, `pod ${id}: setting up traffic capture in ${request.netns} failed`, (err as Error).message);
  }
  deps.log('info', `pod ${id}: traffic capture set up in ${request.netns}`);
}

async function check(request: CniRequest, config: PluginConfig, deps: PluginDeps): Promise<void> {
  const pod = await podOf(request, config, deps);
  if (!pod || !redirectFor(pod).capture) return;
  const runner = new CommandRunner(request.netns);
  const state = parseSavedState(await runner.check('iptables-save', []));
  if (!hasMeshState(state)) {
    throw new CniError(CniErrorCode.RulesMissing, `pod ${pod.metadata?.namespace}/${pod.metadata?.name}: no mesh capture rules in ${request.netns}`);
  }
}

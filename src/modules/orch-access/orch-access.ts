import type * as k8s from '@kubernetes/client-node';
import { orchLibrary } from '../orch';
import { inject, injectable } from 'inversify';
import { apiErrorMessage, OrchClient, statusCodeOf } from '../orch';
import { UserError } from '../shared/user-error';
import { checkName, checkNamespace } from './pod-ref';
import { isReady, isRunning, parsePodTarget, selectorString } from './pod-target';
import { PortForwarder } from './port-forwarder';

/**
 * What meshctl's diagnosing commands need of the orchestrator: the client (with meshctl's
 * identity flags), the namespace to work in, pods named as the commands take them, and the
 * port-forwarder to reach them. Resolve it in a command's scope with OrchClientOptionsToken
 * bound to `meshctlOrchOptions(flags)`.
 */
@injectable()
export class OrchAccess {
  constructor(
    @inject(OrchClient) readonly client: OrchClient,
    @inject(PortForwarder) readonly forwarder: PortForwarder,
  ) {}

  /** `-n` when given, else the namespace of the config's current context, else `default`. */
  namespace(flagNamespace?: string): string {
    if (flagNamespace) return checkNamespace(flagNamespace);
    const kc = this.client.kubeConfig;
    return kc.getContextObject(kc.getCurrentContext())?.namespace || 'default';
  }

  /**
   * The pod `target` names (`[<type>/]<name>[.<namespace>]`; types pod and deployment); a
   * deployment gives one of its running pods, a ready one first. `namespace` applies when the
   * target has none. @throws UserError as one line (`pod foo not found in namespace bar`).
   */
  async resolvePod(target: string, namespace: string): Promise<k8s.V1Pod> {
    const parsed = parsePodTarget(target);
    const ns = checkNamespace(parsed.namespace ?? namespace);
    const name = checkName(parsed.kind, parsed.name);
    if (parsed.kind === 'pod') {
      try {
        return await this.client.api(orchLibrary().CoreV1Api).readNamespacedPod({ name, namespace: ns });
      } catch (err) {
        if (statusCodeOf(err) === 404) throw new UserError(`pod ${name} not found in namespace ${ns}`);
        throw new UserError(`cannot read pod ${name} in namespace ${ns}: ${apiErrorMessage(err)}`);
      }
    }
    let deployment: k8s.V1Deployment;
    try {
      deployment = await this.client.api(orchLibrary().AppsV1Api).readNamespacedDeployment({ name, namespace: ns });
    } catch (err) {
      if (statusCodeOf(err) === 404) throw new UserError(`deployment ${name} not found in namespace ${ns}`);
      throw new UserError(`cannot read deployment ${name} in namespace ${ns}: ${apiErrorMessage(err)}`);
    }
    const selector = selectorString(deployment.spec?.selector);
    if (!selector) throw new UserError(`deployment ${name}.${ns} has no pod selector`);
    const pods = await this.podsBySelector(ns, selector);
    const pod = pods.find(isReady) ?? pods[0];
    if (!pod) throw new UserError(`deployment ${name}.${ns} has no running pods`);
    return pod;
  }

  /** The running pods of `namespace` matching the label `selector`, by name. */
  async podsBySelector(namespace: string, selector: string): Promise<k8s.V1Pod[]> {
    const ns = checkNamespace(namespace);
    let list: k8s.V1PodList;
    try {
      list = await this.client.api(orchLibrary().CoreV1Api).listNamespacedPod({ namespace: ns, labelSelector: selector });
    } catch (err) {
      throw new UserError(`cannot list pods in namespace ${ns} with selector ${JSON.stringify(selector)}: ${apiErrorMessage(err)}`);
    }
    return list.items.filter(isRunning).sort((a, b) => (a.metadata!.name! < b.metadata!.name! ? -1 : a.metadata!.name! > b.metadata!.name! ? 1 : 0));
  }

  /** Ends every forward and listener, and the client's informers. */
  async close(): Promise<void> {
    await this.forwarder.close();
    this.client.stop();
  }
}

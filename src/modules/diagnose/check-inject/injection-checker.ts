import type { V1MutatingWebhookConfiguration, V1Namespace, V1Pod } from '@kubernetes/client-node';
import { inject, injectable } from 'inversify';
import { NAMESPACES, OrchClient } from '../../orch';
import { UserError } from '../../shared/user-error';
import { getObject, listObjects } from '../orch-reads';
import { MUTATING_WEBHOOK_CONFIGURATIONS } from '../../webhook/resources';
import { analyzeWebhooks, WebhookAnalysis } from './webhook-analysis';

/** `app=web,version=v1` (`==` too) as labels; anything else is refused naming the part. */
export function parseLabelPairs(text: string): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const raw of text.split(',')) {
    const part = raw.trim();
    if (part === '') continue;
    const m = /^([A-Za-z0-9][-A-Za-z0-9_./]*)\s*==?\s*([-A-Za-z0-9_.]*)$/.exec(part);
    if (!m) throw new UserError(`--labels: "${part}" is not a label pair key=value`);
    labels[m[1]] = m[2];
  }
  return labels;
}

/** Reads the webhook configurations and the namespace's labels, then judges each mesh injection webhook. */
@injectable()
export class InjectionChecker {
  constructor(@inject(OrchClient) private readonly client: OrchClient) {}

  /** The verdicts for an existing pod (its labels, its namespace's labels). */
  checkPod(pod: V1Pod): Promise<WebhookAnalysis[]> {
    return this.check(pod.metadata?.namespace ?? 'default', pod.metadata?.labels ?? {});
  }

  /** The verdicts for a pod that would have `labels` in `namespace`. */
  async check(namespace: string, labels: Readonly<Record<string, string>>): Promise<WebhookAnalysis[]> {
    const [ns, configs] = await Promise.all([
      getObject<V1Namespace>(this.client, NAMESPACES, undefined, namespace),
      listObjects<V1MutatingWebhookConfiguration>(this.client, MUTATING_WEBHOOK_CONFIGURATIONS),
    ]);
    if (!ns) throw new UserError(`namespace ${namespace} not found`);
    return analyzeWebhooks(configs, labels, ns.metadata?.labels ?? {});
  }
}

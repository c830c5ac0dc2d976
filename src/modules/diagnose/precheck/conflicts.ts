/**
 * Resources that conflict with installing the mesh: another service mesh's API groups and
 * sidecar injection webhooks (the incumbent's, whose objects look like ours but are not read
 * by this mesh, and whose injector would add a second proxy to pods).
 */
import type { V1CustomResourceDefinition, V1MutatingWebhookConfiguration } from '@kubernetes/client-node';
import { OrchClient } from '../../orch';
import { MUTATING_WEBHOOK_CONFIGURATIONS } from '../../webhook/resources';
import { OTHER_MESH_INJECTOR, OTHER_MESH_RESOURCES } from '../messages/catalogue';
import { Message, message } from '../messages/message';
import { listIfServed, listObjects } from '../orch-reads';
import { CUSTOM_RESOURCE_DEFINITIONS } from './resources';

/** The domain of the other mesh's API groups and webhook names. */
export const OTHER_MESH_DOMAIN = 'istio.io';

function ofOtherMesh(name: string): boolean {
  return name === OTHER_MESH_DOMAIN || name.endsWith(`.${OTHER_MESH_DOMAIN}`);
}

export async function checkConflicts(client: OrchClient): Promise<Message[]> {
  const [crds, webhooks] = await Promise.all([
    listIfServed<V1CustomResourceDefinition>(client, CUSTOM_RESOURCE_DEFINITIONS),
    listObjects<V1MutatingWebhookConfiguration>(client, MUTATING_WEBHOOK_CONFIGURATIONS),
  ]);
  const out: Message[] = [];
  for (const crd of crds) {
    if (ofOtherMesh(crd.spec?.group ?? '')) out.push(message(OTHER_MESH_RESOURCES, `CustomResourceDefinition ${crd.metadata?.name}`, crd.spec.group));
  }
  for (const config of webhooks) {
    // The other mesh names its mutating webhooks under its domain, as this mesh does under mesh.io.
    const injector = (config.webhooks ?? []).find((w) => ofOtherMesh(w.name));
    if (injector) out.push(message(OTHER_MESH_INJECTOR, `MutatingWebhookConfiguration ${config.metadata?.name}`, injector.name));
  }
  return out;
}

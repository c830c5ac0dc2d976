import type * as k8s from '@kubernetes/client-node';
import { orchLibrary } from '../../orch';
import * as path from 'node:path';
import { loadOrchConfig, OrchConfigError } from '../../orch';
import { PLUGIN_ORCHCONFIG_FILE } from '../plugin-location';
import { CniError, CniErrorCode } from './cni-protocol';

const ATTEMPTS = 5;
const RETRY_DELAY_MS = 300;

/** Reads pods with the orchestrator config install-cni wrote into the plug-in's run directory. */
export function podFetcher(cniAgentRunDir: string): (namespace: string, name: string) => Promise<k8s.V1Pod> {
  const file = path.join(cniAgentRunDir, PLUGIN_ORCHCONFIG_FILE);
  let api: k8s.CoreV1Api | undefined;
  return async (namespace, name) => {
    if (!api) {
      try {
        api = loadOrchConfig(file).makeApiClient(orchLibrary().CoreV1Api);
      } catch (err) {
        if (err instanceof OrchConfigError) throw new CniError(CniErrorCode.InvalidConfig, err.message);
        throw err;
      }
    }
    let lastError: unknown;
    for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
      try {
        return await api.readNamespacedPod({ name, namespace });
      } catch (err) {
        lastError = err;
        // A pod the API does not know will not appear by retrying.
        if ((err as { code?: number }).code === 404) {
          throw new CniError(CniErrorCode.PodLookupFailed, `pod ${namespace}/${name} not found in the orchestrator API`);
        }
        if (attempt < ATTEMPTS) await new Promise((resolve) => setTimeout(resolve, RETRY_DELAY_MS));
      }
    }
    throw new CniError(CniErrorCode.TryAgainLater, `pod ${namespace}/${name}: orchestrator API unreachable after ${ATTEMPTS} attempts`, String((lastError as Error)?.message ?? lastError));
  };
}

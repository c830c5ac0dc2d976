/*
 * Applying the install manifest: server-side apply (field manager `meshctl`, conflicts forced,
 * as the incumbent's installer takes ownership of its own objects), CRDs first and waited for
 * until Established so the objects after them can use their kinds; then waiting for the
 * workloads to be ready, and optionally verifying that every object exists.
 */
import type * as k8s from '@kubernetes/client-node';
import { orchLibrary } from '../orch';
import { apiErrorMessage, OrchClient, statusCodeOf } from '../orch';
import { UserError } from '../shared/user-error';
import { ManifestObject, objectRef } from './render';

export const FIELD_MANAGER = 'meshctl';
const POLL_MS = 250;

export type ApplyOutcome = 'created' | 'configured' | 'unchanged';

/** Where lines of progress go: `line` for plain lines (always), `status` for a spinner's text (terminals only). */
export interface InstallReporter {
  line(text: string): void;
  status(text: string): void;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function readOrUndefined(api: k8s.KubernetesObjectApi, obj: ManifestObject): Promise<k8s.KubernetesObject | undefined> {
  try {
    return await api.read({ apiVersion: obj.apiVersion, kind: obj.kind, metadata: { name: obj.metadata.name, namespace: obj.metadata.namespace } });
  } catch (err) {
    if (statusCodeOf(err) === 404) return undefined;
    throw new UserError(`cannot read ${objectRef(obj)}: ${apiErrorMessage(err)}`);
  }
}

/** Applies one object; what happened is told by its resourceVersion before and after. */
export async function applyObject(api: k8s.KubernetesObjectApi, obj: ManifestObject): Promise<ApplyOutcome> {
  const before = await readOrUndefined(api, obj);
  let after: k8s.KubernetesObject;
  try {
    after = await api.patch(structuredClone(obj), undefined, undefined, FIELD_MANAGER, true, orchLibrary().PatchStrategy.ServerSideApply);
  } catch (err) {
    throw new UserError(`cannot apply ${objectRef(obj)}: ${apiErrorMessage(err)}`);
  }
  if (!before) return 'created';
  return before.metadata?.resourceVersion === after.metadata?.resourceVersion ? 'unchanged' : 'configured';
}

async function waitEstablished(api: k8s.KubernetesObjectApi, crd: ManifestObject, deadline: number): Promise<void> {
  for (;;) {
    const current = (await readOrUndefined(api, crd)) as k8s.V1CustomResourceDefinition | undefined;
    if (current?.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) return;
    if (Date.now() > deadline) throw new UserError(`${objectRef(crd)} did not become Established in time`);
    await sleep(POLL_MS);
  }
}

/** Applies `objects` in order, CRDs first and waited for; returns each object's outcome. */
export async function applyManifest(client: OrchClient, objects: ManifestObject[], reporter: InstallReporter, timeoutMs: number): Promise<Map<string, ApplyOutcome>> {
  const api = client.api(orchLibrary().KubernetesObjectApi);
  const outcomes = new Map<string, ApplyOutcome>();
  const crds = objects.filter((o) => o.kind === 'CustomResourceDefinition');
  const deadline = Date.now() + timeoutMs;
  for (const obj of crds) {
    reporter.status(`applying ${objectRef(obj)}`);
    outcomes.set(objectRef(obj), await applyObject(api, obj));
  }
  for (const crd of crds) {
    reporter.status(`waiting for ${objectRef(crd)} to be Established`);
    await waitEstablished(api, crd, deadline);
  }
  if (crds.length > 0) reporter.line(`✔ CRDs applied and established (${crds.length})`);
  // A fresh API object: the one above cached discovery from before the CRDs existed.
  const api2 = client.api(orchLibrary().KubernetesObjectApi);
  for (const obj of objects.filter((o) => o.kind !== 'CustomResourceDefinition')) {
    reporter.status(`applying ${objectRef(obj)}`);
    const outcome = await applyObject(api2, obj);
    outcomes.set(objectRef(obj), outcome);
    reporter.line(`${objectRef(obj)} ${outcome}`);
  }
  return outcomes;
}

/** Whether a workload is ready, and a short `ready/desired` for the progress line. */
function readiness(obj: k8s.V1Deployment | k8s.V1DaemonSet, kind: string): { ready: boolean; summary: string } {
  if (kind === 'Deployment') {
    const d = obj as k8s.V1Deployment;
    const want = d.spec?.replicas ?? 1;
    const have = d.status?.availableReplicas ?? 0;
    const current = (d.status?.observedGeneration ?? 0) >= (d.metadata?.generation ?? 0);
    return { ready: current && have >= want && (d.status?.updatedReplicas ?? 0) >= want, summary: `${have}/${want} available` };
  }
  const ds = obj as k8s.V1DaemonSet;
  const want = ds.status?.desiredNumberScheduled ?? 0;
  const have = ds.status?.numberReady ?? 0;
  const current = (ds.status?.observedGeneration ?? 0) >= (ds.metadata?.generation ?? 0);
  return { ready: current && have >= want, summary: `${have}/${want} ready` };
}

/** Waits until every Deployment is available and every DaemonSet ready, one line per component as it gets there. */
export async function waitForReadiness(client: OrchClient, objects: ManifestObject[], reporter: InstallReporter, timeoutMs: number): Promise<void> {
  const api = client.api(orchLibrary().KubernetesObjectApi);
  const pending = objects.filter((o) => o.kind === 'Deployment' || o.kind === 'DaemonSet');
  const deadline = Date.now() + timeoutMs;
  const last = new Map<string, string>();
  while (pending.length > 0) {
    for (const obj of [...pending]) {
      const current = (await readOrUndefined(api, obj)) as k8s.V1Deployment | undefined;
      if (!current) throw new UserError(`${objectRef(obj)} disappeared while waiting for it to be ready`);
      const { ready, summary } = readiness(current, obj.kind);
      last.set(objectRef(obj), summary);
      if (ready) {
        pending.splice(pending.indexOf(obj), 1);
        reporter.line(`✔ ${objectRef(obj)} ready (${summary})`);
      }
    }
    if (pending.length === 0) break;
    reporter.status(`waiting for ${pending.map((o) => `${objectRef(o)} (${last.get(objectRef(o))})`).join(', ')}`);
    if (Date.now() > deadline) {
      throw new UserError(`not ready after ${Math.round(timeoutMs / 1000)}s (--readiness-timeout): ${pending.map((o) => `${objectRef(o)} ${last.get(objectRef(o))}`).join(', ')}`);
    }
    await sleep(POLL_MS);
  }
}

/** Checks that every object exists; the missing ones are named. */
export async function verifyInstall(client: OrchClient, objects: ManifestObject[]): Promise<void> {
  const api = client.api(orchLibrary().KubernetesObjectApi);
  const missing: string[] = [];
  for (const obj of objects) if (!(await readOrUndefined(api, obj))) missing.push(objectRef(obj));
  if (missing.length > 0) throw new UserError(`verification failed: ${missing.length} of ${objects.length} objects missing: ${missing.join(', ')}`);
}

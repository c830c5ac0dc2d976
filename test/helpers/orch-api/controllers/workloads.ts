import { createHash } from 'node:crypto';
import { labelSelectorMatches } from '../selectors';
import type { Obj } from '../store';
import { type ControllerContext, controllerOf, ownerRef, typeOf, writeStatus } from './context';
import { WorkQueue } from './work-queue';

/*
 * The Deployment and ReplicaSet controllers, reduced to what tests see: a Deployment owns one
 * ReplicaSet per pod template (named `<deployment>-<template hash>`, older ones removed once
 * the new one exists), a ReplicaSet keeps `replicas` pods from its template. Pods are created
 * through admission, so injection webhooks apply to them as on a real cluster. Status fields
 * (replicas, readyReplicas, availableReplicas, observedGeneration) follow. A DaemonSet keeps one
 * pod per node (`spec.nodeName` set), its status counting them (desiredNumberScheduled,
 * numberReady, numberAvailable, observedGeneration).
 */

const DEPLOYMENTS = 'apps/deployments';
const REPLICASETS = 'apps/replicasets';
const DAEMONSETS = 'apps/daemonsets';

function templateHash(template: Obj): string {
  const digest = createHash('sha256').update(JSON.stringify(template ?? {})).digest();
  const alphabet = 'bcdfghjklmnpqrstvwxz2456789';
  let out = '';
  for (let i = 0; i < 10; i++) out += alphabet[digest[i] % alphabet.length];
  return out;
}

const isReady = (pod: Obj) => !pod.metadata.deletionTimestamp && (pod.status?.conditions ?? []).some((c: Obj) => c.type === 'Ready' && c.status === 'True');

export class WorkloadControllers {
  private readonly deployments: WorkQueue;
  private readonly replicaSets: WorkQueue;
  private readonly daemonSets: WorkQueue;

  constructor(private readonly ctx: ControllerContext) {
    this.deployments = new WorkQueue((key) => this.reconcileDeployment(key));
    this.replicaSets = new WorkQueue((key) => this.reconcileReplicaSet(key));
    this.daemonSets = new WorkQueue((key) => this.reconcileDaemonSet(key));
    ctx.store.onChange((e) => {
      const ns = e.object.metadata.namespace;
      if (e.key === DEPLOYMENTS) this.deployments.add(`${ns}/${e.object.metadata.name}`);
      if (e.key === REPLICASETS) {
        this.replicaSets.add(`${ns}/${e.object.metadata.name}`);
        const owner = controllerOf(e.object);
        if (owner?.kind === 'Deployment') this.deployments.add(`${ns}/${owner.name}`);
      }
      if (e.key === DAEMONSETS) this.daemonSets.add(`${ns}/${e.object.metadata.name}`);
      if (e.key === '/pods') {
        const owner = controllerOf(e.object);
        if (owner?.kind === 'ReplicaSet') this.replicaSets.add(`${ns}/${owner.name}`);
        if (owner?.kind === 'DaemonSet') this.daemonSets.add(`${ns}/${owner.name}`);
      }
    });
  }

  stop(): void {
    this.deployments.stop();
    this.replicaSets.stop();
    this.daemonSets.stop();
  }

  private async reconcileDeployment(key: string): Promise<void> {
    const [namespace, name] = key.split('/');
    const deployment = this.ctx.store.get(DEPLOYMENTS, namespace, name);
    if (!deployment || deployment.metadata.deletionTimestamp) return;
    const rsType = typeOf(this.ctx, 'apps/v1', 'ReplicaSet');
    const hash = templateHash(deployment.spec?.template);
    const rsName = `${name}-${hash}`;
    const owned = this.ctx.store.items(REPLICASETS, namespace).filter((rs) => controllerOf(rs)?.uid === deployment.metadata.uid);
    const replicas = deployment.spec?.replicas ?? 1;
    let current = owned.find((rs) => rs.metadata.name === rsName);
    if (!current) {
      const template = structuredClone(deployment.spec?.template ?? {});
      template.metadata = { ...(template.metadata ?? {}), labels: { ...(template.metadata?.labels ?? {}), 'pod-template-hash': hash } };
      current = await this.ctx.ops.create(
        rsType,
        'v1',
        namespace,
        {
          metadata: { name: rsName, namespace, labels: template.metadata.labels, annotations: { 'deployment.kubernetes.io/revision': String(owned.length + 1) }, ownerReferences: [ownerRef(deployment, 'Deployment', 'apps/v1')] },
          spec: {
            replicas,
            selector: { ...deployment.spec.selector, matchLabels: { ...(deployment.spec.selector?.matchLabels ?? {}), 'pod-template-hash': hash } },
            template,
          },
        },
        { admission: false },
      );
    } else if (current.spec?.replicas !== replicas) {
      current = await this.ctx.ops.update(rsType, 'v1', namespace, rsName, { ...current, spec: { ...current.spec, replicas } }, { admission: false });
    }
    // The rollout, at once: older ReplicaSets go as soon as the new one exists.
    for (const old of owned) {
      if (old.metadata.name !== rsName) await this.ctx.ops.remove(rsType, 'v1', namespace, old.metadata.name, { propagationPolicy: 'Background' }, { admission: false }).catch(() => undefined);
    }
    const pods = this.ctx.store.items('/pods', namespace).filter((p) => controllerOf(p)?.uid === current?.metadata.uid && !p.metadata.deletionTimestamp);
    const ready = pods.filter(isReady).length;
    const latest = this.ctx.store.get(DEPLOYMENTS, namespace, name);
    if (!latest) return;
    const available = ready >= replicas;
    const status: Obj = {
      observedGeneration: latest.metadata.generation,
      replicas: pods.length,
      updatedReplicas: pods.length,
      ...(ready > 0 ? { readyReplicas: ready, availableReplicas: ready } : {}),
      ...(pods.length - ready > 0 ? { unavailableReplicas: pods.length - ready } : {}),
      conditions: [
        { type: 'Available', status: available ? 'True' : 'False', reason: available ? 'MinimumReplicasAvailable' : 'MinimumReplicasUnavailable', message: available ? 'Deployment has minimum availability.' : 'Deployment does not have minimum availability.' },
        { type: 'Progressing', status: 'True', reason: 'NewReplicaSetAvailable', message: `ReplicaSet "${rsName}" has successfully progressed.` },
      ],
    };
    const keep = (c: Obj[] | undefined) => (c ?? []).map(({ type, status: s, reason }) => ({ type, status: s, reason }));
    if (JSON.stringify({ ...latest.status, conditions: keep(latest.status?.conditions) }) === JSON.stringify({ ...status, conditions: keep(status.conditions) })) return;
    await writeStatus(this.ctx, typeOf(this.ctx, 'apps/v1', 'Deployment'), latest, status);
  }

  private async reconcileReplicaSet(key: string): Promise<void> {
    const [namespace, name] = key.split('/');
    const rs = this.ctx.store.get(REPLICASETS, namespace, name);
    if (!rs || rs.metadata.deletionTimestamp) return;
    const podType = typeOf(this.ctx, 'v1', 'Pod');
    const pods = this.ctx.store.items('/pods', namespace).filter((p) => controllerOf(p)?.uid === rs.metadata.uid && !p.metadata.deletionTimestamp);
    const want = rs.spec?.replicas ?? 1;
    for (let i = pods.length; i < want; i++) await this.createPodFrom(rs, 'ReplicaSet', {});
    // Scale down: the newest pods go first.
    const extra = [...pods].sort((a, b) => String(b.metadata.creationTimestamp).localeCompare(String(a.metadata.creationTimestamp))).slice(0, Math.max(0, pods.length - want));
    for (const pod of extra) await this.ctx.ops.remove(podType, 'v1', namespace, pod.metadata.name, {}, { admission: true }).catch(() => undefined);
    const now = this.ctx.store.items('/pods', namespace).filter((p) => controllerOf(p)?.uid === rs.metadata.uid && !p.metadata.deletionTimestamp);
    const ready = now.filter(isReady).length;
    const latest = this.ctx.store.get(REPLICASETS, namespace, name);
    if (!latest) return;
    const status: Obj = { replicas: now.length, fullyLabeledReplicas: now.filter((p) => labelSelectorMatches(latest.spec?.selector, p.metadata.labels ?? {})).length, observedGeneration: latest.metadata.generation };
    if (ready > 0) Object.assign(status, { readyReplicas: ready, availableReplicas: ready });
    await writeStatus(this.ctx, typeOf(this.ctx, 'apps/v1', 'ReplicaSet'), latest, status);
  }

  /** A pod of `owner`'s template (through admission, as the real controllers create them), `spec` laid over the template's. */
  private async createPodFrom(owner: Obj, kind: 'ReplicaSet' | 'DaemonSet', spec: Obj): Promise<void> {
    const template = structuredClone(owner.spec?.template ?? {});
    const namespace = owner.metadata.namespace;
    await this.ctx.ops.create(
      typeOf(this.ctx, 'v1', 'Pod'),
      'v1',
      namespace,
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { ...(template.metadata ?? {}), generateName: `${owner.metadata.name}-`, namespace, ownerReferences: [ownerRef(owner, kind, 'apps/v1')] },
        spec: { ...(template.spec ?? {}), ...spec },
      },
      { admission: true },
    );
  }

  private async reconcileDaemonSet(key: string): Promise<void> {
    const [namespace, name] = key.split('/');
    const ds = this.ctx.store.get(DAEMONSETS, namespace, name);
    if (!ds || ds.metadata.deletionTimestamp) return;
    const nodes = this.ctx.store.items('/nodes', '').map((n) => n.metadata.name as string);
    const owned = () => this.ctx.store.items('/pods', namespace).filter((p) => controllerOf(p)?.uid === ds.metadata.uid && !p.metadata.deletionTimestamp);
    for (const node of nodes) {
      if (owned().some((p) => p.spec?.nodeName === node)) continue;
      await this.createPodFrom(ds, 'DaemonSet', { nodeName: node });
    }
    const pods = owned();
    const ready = pods.filter(isReady).length;
    const latest = this.ctx.store.get(DAEMONSETS, namespace, name);
    if (!latest) return;
    const status: Obj = {
      desiredNumberScheduled: nodes.length,
      currentNumberScheduled: pods.length,
      updatedNumberScheduled: pods.length,
      numberMisscheduled: 0,
      numberReady: ready,
      numberAvailable: ready,
      ...(pods.length - ready > 0 ? { numberUnavailable: pods.length - ready } : {}),
      observedGeneration: latest.metadata.generation,
    };
    await writeStatus(this.ctx, typeOf(this.ctx, 'apps/v1', 'DaemonSet'), latest, status);
  }
}

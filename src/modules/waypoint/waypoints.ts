/** Waypoints on the cluster: generated, applied (with namespace enrollment), waited for, listed, deleted. */
import type * as k8s from '@kubernetes/client-node';
import { orchLibrary } from '../orch';
import { inject, injectable } from 'inversify';
import { apiErrorMessage, OrchClient, statusCodeOf } from '../orch';
import { UserError } from '../shared/user-error';
import { buildWaypoint, checkWaypointName, conditionsOf, Gateway, GATEWAY_GROUP, GATEWAY_VERSION, GATEWAYS_PLURAL, isWaypoint, programmed, REVISION_LABEL, USE_WAYPOINT_LABEL, WAYPOINT_FOR_LABEL, WaypointOptions } from './gateway';

export interface ApplyOptions extends WaypointOptions {
  overwrite?: boolean;
}

/** How waiting for a waypoint goes: polled at `intervalMs` until `timeoutMs`. */
export interface WaitOptions {
  timeoutMs: number;
  intervalMs?: number;
  onProgress?: (text: string) => void;
}

export const WAYPOINT_READY_TIMEOUT_MS = 90_000;

const byNamespaceAndName = (a: Gateway, b: Gateway) => (a.metadata.namespace === b.metadata.namespace ? (a.metadata.name < b.metadata.name ? -1 : 1) : a.metadata.namespace < b.metadata.namespace ? -1 : 1);

@injectable()
export class Waypoints {
  constructor(@inject(OrchClient) private readonly client: OrchClient) {}

  private get custom(): k8s.CustomObjectsApi {
    return this.client.api(orchLibrary().CustomObjectsApi);
  }

  /** Creates or updates the waypoint (another class or traffic type only with `overwrite`). */
  async apply(options: ApplyOptions): Promise<Gateway> {
    const { name, namespace } = options;
    checkName(name);
    const desired = buildWaypoint(options);
    const current = await this.get(namespace, name);
    let gateway: Gateway;
    if (current) {
      const currentFor = current.metadata.labels?.[WAYPOINT_FOR_LABEL];
      if (!options.overwrite) {
        if (!isWaypoint(current)) throw new UserError(`Gateway ${namespace}/${name} exists and is not a waypoint (gatewayClassName ${JSON.stringify(current.spec?.gatewayClassName)}); use --overwrite to replace it`);
        if (currentFor !== options.for) throw new UserError(`waypoint ${namespace}/${name} exists for ${JSON.stringify(currentFor ?? '')} traffic, not ${JSON.stringify(options.for)}; use --overwrite to replace it`);
      }
      const labels = { ...(current.metadata.labels ?? {}), ...desired.metadata.labels };
      if (!options.revision) delete labels[REVISION_LABEL];
      const body: Gateway = { ...current, metadata: { ...current.metadata, labels }, spec: { ...current.spec, ...desired.spec } };
      gateway = (await this.call(`update Gateway ${namespace}/${name}`, () => this.custom.replaceNamespacedCustomObject({ ...this.where(namespace), name, body }))) as Gateway;
    } else {
      gateway = (await this.call(`create Gateway ${namespace}/${name}`, () => this.custom.createNamespacedCustomObject({ ...this.where(namespace), body: desired }))) as Gateway;
    }
    return gateway;
  }

  /**
   * Whether the namespace may be enrolled with the waypoint: checked before anything is
   * applied, so a refused enrollment changes nothing. @throws UserError when the namespace uses
   * another waypoint and `overwrite` is not set.
   */
  async checkEnrollment(namespace: string, name: string, overwrite: boolean): Promise<void> {
    const current = (await this.readNamespace(namespace)).metadata?.labels?.[USE_WAYPOINT_LABEL];
    if (current !== undefined && current !== name && !overwrite) throw new UserError(`namespace ${namespace} already uses waypoint ${JSON.stringify(current)} (label ${USE_WAYPOINT_LABEL}); use --overwrite to enroll it with ${JSON.stringify(name)}`);
  }

  /** Labels the namespace `mesh.io/use-waypoint=<name>`. */
  async enroll(namespace: string, name: string): Promise<void> {
    const core = this.client.api(orchLibrary().CoreV1Api);
    const ns = await this.readNamespace(namespace);
    if (ns.metadata?.labels?.[USE_WAYPOINT_LABEL] === name) return;
    const body: k8s.V1Namespace = { ...ns, metadata: { ...ns.metadata, labels: { ...(ns.metadata?.labels ?? {}), [USE_WAYPOINT_LABEL]: name } } };
    await this.call(`label Namespace ${namespace}`, () => core.replaceNamespace({ name: namespace, body }));
  }

  private async readNamespace(namespace: string): Promise<k8s.V1Namespace> {
    try {
      return await this.client.api(orchLibrary().CoreV1Api).readNamespace({ name: namespace });
    } catch (err) {
      if (statusCodeOf(err) === 404) throw new UserError(`namespace ${namespace} not found`);
      throw new UserError(`cannot read Namespace ${namespace}: ${apiErrorMessage(err)}`);
    }
  }

  /** Polls until the waypoint's Programmed condition is True. @throws UserError after the timeout, with its last conditions. */
  async waitProgrammed(namespace: string, name: string, options: WaitOptions): Promise<Gateway> {
    const deadline = Date.now() + options.timeoutMs;
    for (;;) {
      const gw = await this.get(namespace, name);
      if (!gw) throw new UserError(`waypoint ${namespace}/${name} disappeared while waiting for it`);
      const state = programmed(gw);
      if (state === 'True') return gw;
      options.onProgress?.(`waiting for waypoint ${namespace}/${name} to be programmed (Programmed: ${state})`);
      if (Date.now() >= deadline) {
        const why = conditionsOf(gw).find((c) => c.type === 'Programmed');
        throw new UserError(`timed out after ${Math.round(options.timeoutMs / 1000)}s waiting for waypoint ${namespace}/${name} to be programmed${why ? ` (${why.reason ?? ''}${why.message ? `: ${why.message}` : ''})` : ' (no status reported)'}`);
      }
      await new Promise((r) => setTimeout(r, Math.min(options.intervalMs ?? 500, Math.max(0, deadline - Date.now()))));
    }
  }

  /** The waypoints of `namespace`, or of every namespace when it is undefined, by namespace and name. */
  async list(namespace?: string, revision?: string): Promise<Gateway[]> {
    const labelSelector = revision ? `${REVISION_LABEL}=${revision}` : undefined;
    let answer: unknown;
    try {
      answer = namespace
        ? await this.custom.listNamespacedCustomObject({ ...this.where(namespace), labelSelector })
        : await this.custom.listClusterCustomObject({ group: GATEWAY_GROUP, version: GATEWAY_VERSION, plural: GATEWAYS_PLURAL, labelSelector });
    } catch (err) {
      if (statusCodeOf(err) === 404) throw new UserError(`cannot list Gateways: the cluster does not serve ${GATEWAYS_PLURAL}.${GATEWAY_GROUP}/${GATEWAY_VERSION} (install the Gateway API CRDs)`);
      throw new UserError(`cannot list Gateways: ${apiErrorMessage(err)}`);
    }
    const items = ((answer as { items?: Gateway[] })?.items ?? []).filter(isWaypoint);
    return items.sort(byNamespaceAndName);
  }

  /** Deletes the named waypoints. @throws UserError naming one that is missing or not a waypoint. */
  async delete(namespace: string, names: readonly string[]): Promise<string[]> {
    const deleted: string[] = [];
    for (const name of names) {
      checkName(name);
      const gw = await this.get(namespace, name);
      if (!gw) throw new UserError(`waypoint ${namespace}/${name} not found`);
      if (!isWaypoint(gw)) throw new UserError(`Gateway ${namespace}/${name} is not a waypoint (gatewayClassName ${JSON.stringify(gw.spec?.gatewayClassName)})`);
      await this.call(`delete Gateway ${namespace}/${name}`, () => this.custom.deleteNamespacedCustomObject({ ...this.where(namespace), name }));
      deleted.push(name);
    }
    return deleted;
  }

  async get(namespace: string, name: string): Promise<Gateway | undefined> {
    try {
      return (await this.custom.getNamespacedCustomObject({ ...this.where(namespace), name })) as Gateway;
    } catch (err) {
      if (statusCodeOf(err) === 404) {
        // 404 also when the Gateway kind is not served: say so rather than "not found".
        await this.list(namespace);
        return undefined;
      }
      throw new UserError(`cannot read Gateway ${namespace}/${name}: ${apiErrorMessage(err)}`);
    }
  }

  private where(namespace: string) {
    return { group: GATEWAY_GROUP, version: GATEWAY_VERSION, namespace, plural: GATEWAYS_PLURAL };
  }

  private async call<T>(what: string, request: () => Promise<T>): Promise<T> {
    try {
      return await request();
    } catch (err) {
      throw new UserError(`cannot ${what}: ${apiErrorMessage(err)}`);
    }
  }
}

function checkName(name: string): void {
  checkWaypointName(name);
}

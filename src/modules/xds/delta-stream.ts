import { XdsResource } from '../model/generator';
import { isXdsTypeUrl, SHORT_TYPE, TypeUrl, XdsTypeUrl } from '../envoy/type-urls';
import { deltaDiscoveryResponseParts, OutgoingMessage } from '../envoy/wire';
import { DeltaDiscoveryRequest } from '../envoy/discovery-requests';
import { AdsStream } from './ads-stream';
import { encodeDeltaDebugResponse, isDebugType } from './debug-requests';
import { newWatchState, versionMarker, WatchState } from './connection';
import { changedSubscription, internNameSet, newlySubscribed } from './interning';
import { DeltaResponse, planDeltaResponse } from './response-planner';

/**
 * One delta (incremental) ADS stream (DeltaAggregatedResources). Requests subscribe and
 * unsubscribe names, ACK or NACK by nonce, and on a reconnect say what the proxy already has
 * (`initial_resource_versions`); responses carry only new or changed resources, each with its
 * own version, and the names removed.
 */
export class DeltaStream extends AdsStream<DeltaDiscoveryRequest, DeltaResponse> {
  /** Debug type URLs asked on this stream (a later request without new names is an ACK). */
  private readonly debugAsked = new Set<string>();

  protected async onRequest(req: DeltaDiscoveryRequest): Promise<void> {
    const typeUrl = req.type_url;
    if (isDebugType(typeUrl)) {
      // Answered once per request that subscribes (or the first one); an ACK asks nothing new.
      const first = !this.debugAsked.has(typeUrl);
      this.debugAsked.add(typeUrl);
      if (!first && req.resource_names_subscribe.length === 0) return;
      await this.answerDebug(typeUrl, req.resource_names_subscribe, (resources, nonce) =>
        encodeDeltaDebugResponse(typeUrl, new Date().toISOString(), nonce, resources, this.options.controlPlaneId),
      );
      return;
    }
    if (!isXdsTypeUrl(typeUrl)) {
      this.options.logger.debug(`node:${this.conn.proxy.id} asked for unsupported type ${typeUrl}; ignoring`);
      return;
    }
    let watch = this.conn.watched.get(typeUrl);
    if (req.error_detail && req.error_detail.code) {
      this.nack(typeUrl, watch, req.response_nonce, req.error_detail.message ?? '');
      return;
    }
    const subscribe = req.resource_names_subscribe;
    const unsubscribe = req.resource_names_unsubscribe;
    if (!watch) {
      const wildcard = subscribe.length === 0 ? typeUrl === TypeUrl.Listener || typeUrl === TypeUrl.Cluster : subscribe.includes('*');
      watch = newWatchState(wildcard ? undefined : internNameSet(subscribe));
      // What the proxy already has (after a reconnect) need not be sent again.
      for (const [name, version] of Object.entries(req.initial_resource_versions ?? {})) watch.sent.set(name, versionMarker(version));
      watch.sent.settle();
      this.conn.watched.set(typeUrl, watch);
      await this.respond(typeUrl, watch, await this.waitForPush(), 'all', true);
      return;
    }
    if (req.response_nonce !== '' && req.response_nonce !== watch.nonceSent && subscribe.length === 0 && unsubscribe.length === 0) {
      this.options.observer.expiredNonce(SHORT_TYPE[typeUrl]);
      return;
    }
    if (req.response_nonce !== '' && req.response_nonce === watch.nonceSent) this.ack(typeUrl, watch, req.response_nonce, watch.versionSent);
    if (subscribe.length === 0 && unsubscribe.length === 0) return;
    if (subscribe.includes('*')) watch.names = undefined;
    const added = watch.names ? newlySubscribed(watch.names, subscribe) : undefined;
    // Replaced, never edited in place: push plans index subscriptions by identity, and
    // identical subscriptions are shared.
    if (watch.names) watch.names = changedSubscription(watch.names, subscribe, unsubscribe);
    for (const n of unsubscribe) if (n !== '*') watch.sent.delete(n);
    if ((added && added.size > 0) || subscribe.includes('*')) await this.respond(typeUrl, watch, await this.waitForPush(), added ?? 'all', true);
  }

  planResponse(
    _typeUrl: XdsTypeUrl, watch: WatchState, generated: XdsResource[], names: readonly string[] | undefined, requested: boolean, hosts?: ReadonlySet<string>,
  ): DeltaResponse | undefined {
    return planDeltaResponse(watch, generated, names, requested, hosts);
  }

  encodeResponse(typeUrl: XdsTypeUrl, response: DeltaResponse, version: string, nonce: string): OutgoingMessage {
    return deltaDiscoveryResponseParts(typeUrl, version, nonce, response.resources, response.removed, this.options.controlPlaneId, response.runs);
  }
}

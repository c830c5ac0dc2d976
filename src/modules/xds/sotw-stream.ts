import { XdsResource } from '../model/generator';
import { isXdsTypeUrl, SHORT_TYPE, XdsTypeUrl } from '../envoy/type-urls';
import { discoveryResponseParts, OutgoingMessage } from '../envoy/wire';
import { DiscoveryRequest } from '../envoy/discovery-requests';
import { AdsStream } from './ads-stream';
import { encodeDebugResponse, isDebugType } from './debug-requests';
import { newWatchState, WatchState } from './connection';
import { internedSetOf, internNameSet, newlySubscribed } from './interning';
import { isStateOfTheWorldType, planSotwResponse, SotwResponse } from './response-planner';

/**
 * One state-of-the-world ADS stream (StreamAggregatedResources). Each DiscoveryRequest is a
 * new subscription, an ACK (possibly naming other resources) or a NACK of the response its
 * nonce names; a request with a stale nonce is ignored. Responses list every resource for
 * LDS and CDS, and the new or changed ones for RDS and EDS.
 */
export class SotwStream extends AdsStream<DiscoveryRequest, SotwResponse> {
  /** Per debug type URL, the nonce and names of the last answer (to recognize ACKs of it). */
  private readonly debugAnswered = new Map<string, { nonce: string; names: string }>();

  protected async onRequest(req: DiscoveryRequest): Promise<void> {
    const typeUrl = req.type_url;
    if (isDebugType(typeUrl)) {
      // Answered once, never a subscription. A client that ACKs the answer (its nonce, the
      // same names) asks nothing new: answering again would loop.
      const key = req.resource_names.join('\n');
      const last = this.debugAnswered.get(typeUrl);
      if (req.response_nonce !== '' && last && last.nonce === req.response_nonce && last.names === key) return;
      await this.answerDebug(typeUrl, req.resource_names, (resources, nonce) => {
        this.debugAnswered.set(typeUrl, { nonce, names: key });
        return encodeDebugResponse(typeUrl, new Date().toISOString(), nonce, resources, this.options.controlPlaneId);
      });
      return;
    }
    if (!isXdsTypeUrl(typeUrl)) {
      this.options.logger.debug(`node:${this.conn.proxy.id} asked for unsupported type ${typeUrl}; ignoring`);
      return;
    }
    const short = SHORT_TYPE[typeUrl];
    let watch = this.conn.watched.get(typeUrl);
    if (req.error_detail && req.error_detail.code) {
      this.nack(typeUrl, watch, req.response_nonce, req.error_detail.message ?? '');
      return;
    }
    if (!watch || req.response_nonce === '') {
      // A new subscription, or a proxy reconnecting with what it already has: answer in full.
      watch = newWatchState(namesOf(typeUrl, req.resource_names));
      this.conn.watched.set(typeUrl, watch);
      await this.respond(typeUrl, watch, await this.waitForPush(), 'all', true);
      return;
    }
    if (req.response_nonce !== watch.nonceSent) {
      this.options.observer.expiredNonce(short);
      this.options.logger.debug(`node:${this.conn.proxy.id} ${short}: expired nonce ${req.response_nonce} (sent ${watch.nonceSent})`);
      return;
    }
    this.ack(typeUrl, watch, req.response_nonce, req.version_info);
    // Most requests are plain ACKs with the same names: compare before building anything.
    if (!namesUnchanged(typeUrl, watch.names, req.resource_names)) {
      const requested = namesOf(typeUrl, req.resource_names);
      const previous = watch.names;
      watch.names = requested;
      // RDS and EDS are not state-of-the-world types: answer only the newly asked names.
      const added = requested && previous && !isStateOfTheWorldType(typeUrl) ? newlySubscribed(previous, requested) : undefined;
      for (const name of watch.sent.keys()) if (requested && !requested.has(name)) watch.sent.delete(name);
      if (added && added.size === 0) return;
      await this.respond(typeUrl, watch, await this.waitForPush(), added ?? 'all', true);
    }
  }

  planResponse(typeUrl: XdsTypeUrl, watch: WatchState, generated: XdsResource[], _names: readonly string[] | undefined, requested: boolean): SotwResponse | undefined {
    return planSotwResponse(watch, typeUrl, generated, requested);
  }

  encodeResponse(typeUrl: XdsTypeUrl, response: SotwResponse, version: string, nonce: string): OutgoingMessage {
    return discoveryResponseParts(typeUrl, version, nonce, response.resources, this.options.controlPlaneId);
  }
}

/** The subscription a request names: undefined for a wildcard, else the shared interned set. */
function namesOf(typeUrl: XdsTypeUrl, names: readonly string[]): Set<string> | undefined {
  if (names.length === 0 || names.includes('*')) return isStateOfTheWorldType(typeUrl) || names.includes('*') ? undefined : new Set();
  return internNameSet(names);
}

/**
 * Whether a request names exactly the current subscription. Checked on every ACK, so it
 * reads the request's list as is rather than building a set from it; a list with repeated
 * names counts as a change and is settled by the interned comparison that follows.
 */
function namesUnchanged(typeUrl: XdsTypeUrl, current: Set<string> | undefined, requested: readonly string[]): boolean {
  if (requested.length === 0 || requested.includes('*')) {
    const all = isStateOfTheWorldType(typeUrl) || requested.includes('*');
    return all ? current === undefined : current?.size === 0;
  }
  if (!current || current.size !== requested.length) return false;
  if (internedSetOf(requested) === current) return true;
  for (const n of requested) if (!current.has(n)) return false;
  return true;
}

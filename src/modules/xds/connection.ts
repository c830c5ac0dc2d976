import { Proxy } from '../model/proxy';
import { SentResources } from './sent-resources';
import { XdsTypeUrl } from '../envoy/type-urls';

/** What one stream has asked for and been sent, per resource type. */
export interface WatchState {
  /** Subscribed names; `undefined` = wildcard (LDS/CDS with no names). */
  names: Set<string> | undefined;
  nonceSent: string;
  versionSent: string;
  nonceAcked: string;
  versionAcked: string;
  /** Last NACK message while the proxy still rejects this type. */
  rejected?: string;
  /** Name → body last sent: lets a push skip what the proxy already has, and drives delta removals. */
  sent: SentResources;
  /** When the last response was written. */
  sentAt?: number;
  ackedAt?: number;
}

export function newWatchState(names: Set<string> | undefined): WatchState {
  return { names, nonceSent: '', versionSent: '', nonceAcked: '', versionAcked: '', sent: new SentResources() };
}

/**
 * What a delta proxy said it already has (`initial_resource_versions`) stands in `sent` as an
 * empty marker buffer carrying that version, until a push replaces it with the body.
 */
const versionMarkers = new WeakMap<Buffer, string>();

export function versionMarker(version: string): Buffer {
  const marker = Buffer.alloc(0);
  versionMarkers.set(marker, version);
  return marker;
}

/** The version a `sent` entry stands for when it is a marker; undefined for a real body. */
export function markedVersion(body: Buffer): string | undefined {
  return versionMarkers.get(body);
}

let counter = 0;

/** One ADS stream of one proxy. */
export class XdsConnection {
  readonly id: string;
  readonly connectedAt = new Date();
  readonly watched = new Map<XdsTypeUrl, WatchState>();
  /** The caller's authenticated identities (SPIFFE IDs); empty on an unauthenticated listener. */
  identities: string[] = [];
  /** The stream asked for a debug type (`mesh.io/debug/syncz`): a debug client, unless it also subscribes to xDS types. */
  debugClient = false;
  private nonceCounter = 0;
  private readonly serial: number;

  constructor(
    readonly proxy: Proxy,
    readonly protocol: 'sotw' | 'delta',
    readonly peer: string,
  ) {
    counter += 1;
    this.serial = counter;
    this.id = `${proxy.id}-${counter}`;
  }

  /** Unique per stream: the connection's serial number, then a counter. */
  nextNonce(): string {
    this.nonceCounter += 1;
    return `${this.serial.toString(36)}-${this.nonceCounter}`;
  }
}

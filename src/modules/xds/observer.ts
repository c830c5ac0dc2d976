/**
 * What the xDS server reports as it works; the daemon turns it into metrics
 * (pilot_xds, pilot_xds_pushes, pilot_total_xds_rejects...). Kept as an interface so the
 * server does not depend on a metrics library and tests can watch it directly.
 */
export type ShortType = 'lds' | 'rds' | 'cds' | 'eds' | 'nds';

export interface XdsObserver {
  /** A stream opened (+1) or closed (-1). */
  connections(delta: number): void;
  /** A response was built and written: its size and the seconds spent generating and writing it. */
  pushed(type: ShortType, bytes: number, buildSeconds: number, sendSeconds: number): void;
  /** A response was encoded (`reused` false) or written with the encoding another stream got (true). */
  encoded(type: ShortType, reused: boolean): void;
  sendError(type: ShortType): void;
  buildError(type: ShortType): void;
  /** The proxy rejected a response (NACK). */
  rejected(type: ShortType, proxyId: string, message: string): void;
  /** The proxy accepted a later response of a type it had rejected. */
  rejectCleared(type: ShortType, proxyId: string): void;
  expiredNonce(type: ShortType): void;
  /** Seconds a proxy's push waited in the queue, and from the change to the proxy's last write. */
  queued(seconds: number): void;
  converged(seconds: number): void;
  internalError(): void;
  /** gRPC did not take a response in time (pilot_xds_write_timeout). */
  writeTimeout(): void;
}

/**
 * What the agent and its proxy workers (`--concurrency`) say to each other over the cluster
 * IPC channel. Resources travel as the JSON the xDS client decoded (no bytes, no Longs).
 */
import type { EnvoyLogLevel } from '../../envoy/log-levels';
import type { ClusterStatus, SecretCertificates } from '../../proxy/builtin-proxy';
import type { Decoded } from '../../proxy/xds/xds-client';

export type LogLevels = [string, EnvoyLogLevel][];

export type ToWorker =
  | { kind: 'init'; sdsSocketPath?: string; levels: LogLevels }
  | { kind: 'apply'; seq: number; typeUrl: string; resources: [string, Decoded][] }
  | { kind: 'log-levels'; levels: LogLevels }
  | { kind: 'stop' };

/** What the admin port shows of a worker; listeners and clusters are the same in every worker. */
export interface WorkerState {
  ready: boolean;
  activeConnections: number;
  bound: Record<string, string>;
  clusters: ClusterStatus[];
  secrets: SecretCertificates[];
}

export type FromWorker =
  | { kind: 'hello' }
  | { kind: 'subscribe'; typeUrl: string; names: string[] }
  | { kind: 'applied'; seq: number; error?: string; state: WorkerState }
  | { kind: 'state'; state: WorkerState }
  | { kind: 'connections'; activeConnections: number };

/** Messages between the bench (parent) and its client workers (child processes, over IPC). */
import type { Short } from './xds';

export interface ClientSpec {
  /** Global client index. */
  index: number;
  ip: string;
  namespace: string;
  pod: string;
}

export interface ConnectCommand {
  t: 'connect';
  id: number;
  port: number;
  clients: ClientSpec[];
  streamsPerConnection: number;
  /** Spread stream starts over this many ms (0 = all at once). */
  rampMs: number;
  /** HTTP/2 flow-control window of each client connection and stream (grpc-node.flow_control_window); 0 = grpc-js default (64 KiB). */
  windowBytes: number;
  /** Incremental (delta) ADS streams instead of state of the world. */
  delta: boolean;
}

/** Resets the per-phase counters; the reply carries the worker's clock at the mark. */
export interface MarkCommand {
  t: 'mark';
  id: number;
  /** Types each client must receive before it counts as updated. */
  expect: Short[];
}

export interface StatusCommand {
  t: 'status';
  id: number;
}

export interface ReportCommand {
  t: 'report';
  id: number;
}

export interface StopCommand {
  t: 'stop';
  id: number;
}

export type Command = ConnectCommand | MarkCommand | StatusCommand | ReportCommand | StopCommand;

export interface Status {
  /** Clients that have CDS, EDS, LDS and RDS and no subscription change outstanding. */
  initialDone: number;
  /** Clients that received every expected type since the last mark. */
  updated: number;
  /** Clients waiting for resources they subscribed to. */
  awaiting: number;
  /** Latest response time (epoch ms, sub-ms precision) of any client since the mark; 0 if none. */
  lastAt: number;
  responses: number;
  /** Response bytes received since the mark. */
  bytes: number;
  /** Streams that ended or failed. */
  failed: number;
  firstError?: string;
}

export interface TypeTotals {
  responses: number;
  bytes: number;
  resources: number;
}

export interface ClientReport {
  index: number;
  /** Epoch ms of the first/last response since the mark (0 = none). */
  firstAt: number;
  lastAt: number;
  bytes: number;
  responses: number;
  /** Initial connect: when the stream was opened and when the client first had all four types. */
  startedAt: number;
  initialDoneAt: number;
  /** Versions (version_info) of responses since the mark. */
  versions: string[];
}

export interface Report {
  clients: ClientReport[];
  byType: Record<Short, TypeTotals>;
  /** CPU seconds (user + system) the worker used since the mark. */
  cpuSeconds: number;
  rssBytes: number;
}

export type Reply =
  | { t: 'ok'; id: number }
  | { t: 'status'; id: number; status: Status }
  | { t: 'report'; id: number; report: Report }
  | { t: 'error'; id: number; message: string };

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
  /** Phase index the responses from now on belong to (0 = connect). */
  phase: number;
  /** Keep what arrives for the transport-limit run (see capture.ts). */
  capture: boolean;
  /** Send the client's index as `bench-client` metadata (the transport-limit server knows its streams by it). */
  tag: boolean;
}

/** Resets the per-phase counters; the reply carries the worker's clock at the mark. */
export interface MarkCommand {
  t: 'mark';
  id: number;
  /** Types each client must receive before it counts as updated. */
  expect: Short[];
  /** Phase index the responses from now on belong to. */
  phase: number;
}

/** Ends every client's stream and connection; the worker stays up for the next connect. */
export interface CloseCommand {
  t: 'close';
  id: number;
}

/** Writes what was captured to `file` (capture.ts) and forgets it. */
export interface DumpCommand {
  t: 'dump';
  id: number;
  file: string;
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

export type Command = ConnectCommand | MarkCommand | StatusCommand | ReportCommand | CloseCommand | DumpCommand | StopCommand;

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
  | { t: 'dumped'; id: number; frames: number; frameBytes: number; responses: number }
  | { t: 'error'; id: number; message: string };

// ---------------------------------------------------------------------------------------------
// The transport-limit server (limit.ts), a child process of the bench
// ---------------------------------------------------------------------------------------------

/** Reads the workers' captures and listens on a loopback port. */
export interface LimitLoadCommand {
  t: 'load';
  id: number;
  files: string[];
  /** Bytes written but not yet taken by the socket, across all streams (the daemon's write budget). */
  budgetBytes: number;
}

/** Writes every client's responses of phase `phase` (>= 1) to its stream; phase 0 is written when a stream opens. */
export interface LimitReplayCommand {
  t: 'replay';
  id: number;
  phase: number;
}

export type LimitCommand = LimitLoadCommand | LimitReplayCommand | StopCommand;

export type LimitReply =
  | { t: 'ok'; id: number }
  | { t: 'loaded'; id: number; port: number; clients: number; responses: number }
  | { t: 'error'; id: number; message: string };

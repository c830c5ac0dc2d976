/**
 * The bench's child processes, spoken to over IPC: the client workers (worker.ts) and the
 * transport-limit server (limit.ts). Each command carries an id; its reply carries it back.
 */
import { ChildProcess, fork } from 'node:child_process';
import * as path from 'node:path';
import { BenchError } from './daemon';
import type { ClientReport, Command, LimitCommand, LimitReply, Reply, Report, Status, TypeTotals } from './protocol';
import { Short, SHORTS } from './xds';

type WithoutId<C> = C extends { id: number } ? Omit<C, 'id'> : never;

export class ChildHandle<C extends { t: string; id: number }, R extends { t: string; id: number }> {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (r: R) => void; reject: (e: Error) => void; timer: NodeJS.Timeout }>();
  exitError: string | undefined;
  private stopping = false;

  constructor(readonly child: ChildProcess, readonly name: string) {
    child.on('message', (r: R) => {
      const p = this.pending.get(r.id);
      if (!p) return;
      this.pending.delete(r.id);
      clearTimeout(p.timer);
      if (r.t === 'error') p.reject(new BenchError(`${name}: ${(r as unknown as { message: string }).message}`));
      else p.resolve(r);
    });
    child.on('exit', (code, signal) => {
      if (!this.stopping) this.exitError = `${name} exited (code ${code}, signal ${signal})`;
      for (const p of this.pending.values()) {
        clearTimeout(p.timer);
        p.reject(new BenchError(this.exitError ?? `${name} exited`));
      }
      this.pending.clear();
    });
  }

  static fork<C extends { t: string; id: number }, R extends { t: string; id: number }>(script: string, name: string, nodeArgs: readonly string[] = []): ChildHandle<C, R> {
    return new ChildHandle<C, R>(fork(path.join(__dirname, script), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv: [...nodeArgs] }), name);
  }

  get pid(): number {
    return this.child.pid!;
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  check(): void {
    if (this.exitError) throw new BenchError(this.exitError);
  }

  request(cmd: WithoutId<C>, timeoutMs = 120_000): Promise<R> {
    if (!this.alive) return Promise.reject(new BenchError(this.exitError ?? `${this.name} is gone`));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new BenchError(`${this.name} did not answer "${cmd.t}" within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(id, { resolve, reject, timer });
      this.child.send({ ...cmd, id });
    });
  }

  async stop(): Promise<void> {
    this.stopping = true;
    if (!this.alive) return;
    const exited = new Promise((r) => this.child.once('exit', r));
    await this.request({ t: 'stop' } as WithoutId<C>, 5000).catch(() => undefined);
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 3000);
    await exited;
    clearTimeout(timer);
  }

  killNow(): void {
    if (this.alive) this.child.kill('SIGKILL');
  }
}

export type WorkerHandle = ChildHandle<Command, Reply>;
export type LimitServer = ChildHandle<LimitCommand, LimitReply>;

export function startLimitServer(): LimitServer {
  return ChildHandle.fork<LimitCommand, LimitReply>('limit.js', 'transport-limit server');
}

/** The client workers, as one. */
export class Workers {
  constructor(readonly list: WorkerHandle[]) {}

  static start(n: number, nodeArgs: readonly string[] = []): Workers {
    return new Workers(Array.from({ length: n }, (_, i) => ChildHandle.fork<Command, Reply>('worker.js', `client worker ${i}`, nodeArgs)));
  }

  check(): void {
    for (const w of this.list) w.check();
  }

  async all(cmd: WithoutId<Command>, timeoutMs?: number): Promise<Reply[]> {
    return Promise.all(this.list.map((w) => w.request(cmd, timeoutMs)));
  }

  async status(): Promise<Status> {
    const replies = await this.all({ t: 'status' });
    const out: Status = { initialDone: 0, updated: 0, awaiting: 0, lastAt: 0, responses: 0, bytes: 0, failed: 0 };
    for (const r of replies) {
      if (r.t !== 'status') continue;
      const s = r.status;
      out.initialDone += s.initialDone;
      out.updated += s.updated;
      out.awaiting += s.awaiting;
      out.lastAt = Math.max(out.lastAt, s.lastAt);
      out.responses += s.responses;
      out.bytes += s.bytes;
      out.failed += s.failed;
      out.firstError ??= s.firstError;
    }
    return out;
  }

  async report(): Promise<{ clients: ClientReport[]; byType: Record<Short, TypeTotals>; cpuSeconds: number; rssBytes: number }> {
    const reports = (await this.all({ t: 'report' })).flatMap((r) => (r.t === 'report' ? [r.report] : [])) as Report[];
    const byType = Object.fromEntries(SHORTS.map((s) => [s, { responses: 0, bytes: 0, resources: 0 }])) as Record<Short, TypeTotals>;
    for (const r of reports) for (const s of SHORTS) for (const k of ['responses', 'bytes', 'resources'] as const) byType[s][k] += r.byType[s][k];
    return {
      clients: reports.flatMap((r) => r.clients),
      byType,
      cpuSeconds: reports.reduce((a, r) => a + r.cpuSeconds, 0),
      rssBytes: reports.reduce((a, r) => a + r.rssBytes, 0),
    };
  }

  async stop(): Promise<void> {
    await Promise.all(this.list.map((w) => w.stop()));
  }

  killNow(): void {
    for (const w of this.list) w.killNow();
  }
}

import { Session } from 'node:inspector/promises';
import { injectable } from 'inversify';
import type { Profile } from 'pprof-format';
import { commandLine } from '../topics';
import { cpuProfileToPprof, heapProfileToPprof, V8CpuProfile, V8HeapProfile } from './convert';

/** V8 ticks every millisecond while a CPU profile runs (its default; cheap for a profile on demand). */
export const CPU_SAMPLING_INTERVAL_MICROS = 1000;
/** On average one sampled allocation per 512 KiB, the Go runtime's default memory profile rate. */
export const HEAP_SAMPLING_INTERVAL_BYTES = 512 * 1024;

/** Another CPU profile is being taken; V8 runs one profiler per process. */
export class ProfilerBusyError extends Error {}
/** The profiler stopped (the daemon is shutting down) or the caller gave up. */
export class ProfileAbortedError extends Error {}

/**
 * Profiles of this process, taken in-process through the inspector (no debugger port is
 * opened): CPU profiles on demand, one at a time, and a heap profile of what is alive now
 * from allocation sampling, which runs from `start()` on so it covers the daemon's life.
 */
@injectable()
export class InProcessProfiler {
  private session: Session | undefined;
  private cpu: { startedAt: Date; seconds: number; cancel: () => void } | undefined;
  private stopped = false;

  /** Connects to the inspector and starts allocation sampling for heap profiles. */
  async start(): Promise<void> {
    if (this.session) return;
    this.stopped = false;
    const session = new Session();
    session.connect();
    this.session = session;
    await session.post('HeapProfiler.enable');
    await session.post('HeapProfiler.startSampling', { samplingInterval: HEAP_SAMPLING_INTERVAL_BYTES });
  }

  get running(): boolean {
    return this.session !== undefined;
  }

  /** What is being profiled now, for a busy answer. */
  cpuProfileInProgress(): { startedAt: Date; seconds: number } | undefined {
    return this.cpu ? { startedAt: this.cpu.startedAt, seconds: this.cpu.seconds } : undefined;
  }

  /**
   * Samples the CPU for `seconds` (or until `signal` aborts, when the result is dropped).
   * @throws ProfilerBusyError while another CPU profile runs; ProfileAbortedError on abort or stop.
   */
  async cpuProfile(seconds: number, signal?: AbortSignal): Promise<Profile> {
    const session = this.mustRun();
    if (this.cpu) throw new ProfilerBusyError(`a CPU profile of ${this.cpu.seconds}s started at ${this.cpu.startedAt.toISOString()} is still running; one CPU profile runs at a time`);
    let cancel!: () => void;
    const cancelled = new Promise<void>((resolve) => (cancel = resolve));
    this.cpu = { startedAt: new Date(), seconds, cancel };
    const onAbort = () => cancel();
    signal?.addEventListener('abort', onAbort);
    try {
      await session.post('Profiler.enable');
      await session.post('Profiler.setSamplingInterval', { interval: CPU_SAMPLING_INTERVAL_MICROS });
      await session.post('Profiler.start');
      let timer: NodeJS.Timeout | undefined;
      const elapsed = new Promise<void>((resolve) => (timer = setTimeout(resolve, seconds * 1000)));
      const outcome = await Promise.race([elapsed.then(() => 'done' as const), cancelled.then(() => 'cancelled' as const)]);
      clearTimeout(timer);
      const { profile } = await session.post('Profiler.stop');
      await session.post('Profiler.disable');
      if (outcome === 'cancelled' || signal?.aborted) throw new ProfileAbortedError('the CPU profile was cancelled');
      return cpuProfileToPprof(profile as V8CpuProfile, CPU_SAMPLING_INTERVAL_MICROS, program());
    } catch (err) {
      if (this.stopped) throw new ProfileAbortedError('the profiler stopped (shutting down)');
      throw err;
    } finally {
      signal?.removeEventListener('abort', onAbort);
      this.cpu = undefined;
    }
  }

  /** The live heap, from the allocations sampled since start; `gc` collects garbage first, so only what is reachable counts. */
  async heapProfile(options: { gc?: boolean } = {}): Promise<Profile> {
    const session = this.mustRun();
    if (options.gc) await session.post('HeapProfiler.collectGarbage');
    const { profile } = await session.post('HeapProfiler.getSamplingProfile');
    return heapProfileToPprof(profile as unknown as V8HeapProfile, HEAP_SAMPLING_INTERVAL_BYTES, program());
  }

  /** Ends a running CPU profile (its caller gets ProfileAbortedError), stops sampling, disconnects. */
  async stop(): Promise<void> {
    const session = this.session;
    if (!session) return;
    this.stopped = true;
    this.cpu?.cancel();
    this.session = undefined;
    await session.post('HeapProfiler.stopSampling').catch(() => undefined);
    session.disconnect();
  }

  private mustRun(): Session {
    if (!this.session) throw new ProfileAbortedError('profiling is not running');
    return this.session;
  }
}

/** The program profiled, as tools name the profile's main binary. */
function program(): string {
  return commandLine()[0] ?? process.execPath;
}

/**
 * Leader election with a coordination.k8s.io/v1 Lease, with the orchestrator client library's
 * rules (client-go's leaderelection, which the incumbent runs):
 *
 * - A candidate writes its identity into the Lease when the Lease is absent, released (no
 *   holder), or expired. Expiry is judged by the local time at which this candidate last saw
 *   the record change, plus the holder's `leaseDurationSeconds`: never by the holder's clock.
 * - The leader renews every retry period. A leader that has not renewed within the renew
 *   deadline (shorter than the lease duration, so it steps down before anyone may take over),
 *   or that finds another holder in the Lease, stops leading.
 * - Writes are optimistic (the read resourceVersion): two candidates racing for one Lease
 *   cannot both win.
 * - On a graceful stop the leader releases the Lease (empty holder), so a follower takes over
 *   at its next try instead of after the lease duration.
 */
import type { CoordinationV1Api, V1Lease, V1MicroTime } from '@kubernetes/client-node';
import { orchLibrary } from '../orch';
import type { ScopedLogger } from '../logging';
import { statusCodeOf } from '../orch';

export interface LeaseTimings {
  /** How long a follower waits after the last renewal it saw before taking the Lease over. */
  leaseDurationMs: number;
  /** How long the leader keeps leading without a successful renewal. */
  renewDeadlineMs: number;
  /** Between tries to acquire, and between renewals. */
  retryPeriodMs: number;
}

/** The incumbent's: a 30 s lease, renew deadline half of it, retry period a quarter. */
export function timingsFromLeaseDuration(leaseDurationMs: number): LeaseTimings {
  return { leaseDurationMs, renewDeadlineMs: leaseDurationMs / 2, retryPeriodMs: leaseDurationMs / 4 };
}

export interface LeaseElectorOptions {
  api: Pick<CoordinationV1Api, 'readNamespacedLease' | 'createNamespacedLease' | 'replaceNamespacedLease'>;
  namespace: string;
  /** The Lease's name: one per group of singleton controllers. */
  name: string;
  /** Written as holderIdentity; unique per replica. */
  identity: string;
  timings: LeaseTimings;
  log: ScopedLogger;
  /** Called when this replica becomes the leader; leadership is not lost while it runs. */
  onStartedLeading(): Promise<void> | void;
  /** Called when leadership is lost or given up, before the Lease is released. */
  onStoppedLeading(): Promise<void> | void;
  /** Milliseconds; tests replace it. */
  now?: () => number;
}

/** What this candidate last read from the Lease, and when it saw it change. */
interface Observed {
  holder: string;
  durationSeconds: number;
  /** The fields whose change counts as a renewal. */
  key: string;
  at: number;
}

export class LeaseElector {
  private leading = false;
  private stopped = true;
  private timer: NodeJS.Timeout | undefined;
  private observed: Observed | undefined;
  private lastRenew = 0;
  /** Won in the step that was running when stop() came: released without ever leading. */
  private wonWhileStopping = false;
  /** The loop's current step, so stop() can wait for it. */
  private step: Promise<void> = Promise.resolve();
  private readonly now: () => number;

  constructor(private readonly options: LeaseElectorOptions) {
    const { leaseDurationMs, renewDeadlineMs, retryPeriodMs } = options.timings;
    if (!(leaseDurationMs >= 1000)) throw new RangeError(`lease duration must be at least 1s (the Lease records whole seconds), got ${leaseDurationMs} ms`);
    if (!(renewDeadlineMs < leaseDurationMs)) throw new RangeError('the renew deadline must be shorter than the lease duration');
    if (!(retryPeriodMs > 0 && retryPeriodMs < renewDeadlineMs)) throw new RangeError('the retry period must be positive and shorter than the renew deadline');
    this.now = options.now ?? Date.now;
  }

  get isLeader(): boolean {
    return this.leading;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.options.log.info(`joining leader election for Lease ${this.where()} as ${this.options.identity}`);
    this.schedule(0);
  }

  /** Stops trying; a leader stops leading, then releases the Lease. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.step;
    if (this.leading) {
      this.leading = false;
      await this.callback('stopped', this.options.onStoppedLeading);
      await this.release();
    } else if (this.wonWhileStopping) {
      this.wonWhileStopping = false;
      await this.release();
    }
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.step = this.tick();
    }, delayMs);
  }

  private async tick(): Promise<void> {
    const { retryPeriodMs, renewDeadlineMs } = this.options.timings;
    let outcome: Outcome;
    try {
      outcome = await this.withTimeout(this.tryAcquireOrRenew(), renewDeadlineMs);
    } catch (err) {
      outcome = { ok: false, why: (err as Error).message };
    }
    if (this.stopped) {
      if (outcome.ok && !this.leading) this.wonWhileStopping = true;
      return;
    }
    if (outcome.ok) {
      this.lastRenew = this.now();
      if (!this.leading) {
        this.leading = true;
        this.options.log.info(`leader election lock obtained: ${this.where()}`);
        await this.callback('started', this.options.onStartedLeading);
      }
      this.schedule(retryPeriodMs);
      return;
    }
    if (this.leading) {
      const heldByOther = outcome.heldBy !== undefined;
      if (heldByOther || this.now() - this.lastRenew >= renewDeadlineMs) {
        this.leading = false;
        this.options.log.warn(`leader election lock lost: ${this.where()} (${heldByOther ? `now held by ${outcome.heldBy}` : `no renewal within ${renewDeadlineMs} ms: ${outcome.why}`})`);
        await this.callback('stopped', this.options.onStoppedLeading);
        this.schedule(0);
        return;
      }
      this.options.log.warn(`renewing Lease ${this.where()} failed, retrying: ${outcome.why}`);
      this.schedule(retryPeriodMs);
      return;
    }
    if (outcome.heldBy === undefined) this.options.log.debug(`acquiring Lease ${this.where()} failed: ${outcome.why}`);
    // Jitter, as client-go: candidates that failed together do not retry together.
    this.schedule(retryPeriodMs * (1 + Math.random() * 0.2));
  }

  private async tryAcquireOrRenew(): Promise<Outcome> {
    const { api, namespace, name, identity } = this.options;
    const now = this.now();
    let lease: V1Lease;
    try {
      lease = await api.readNamespacedLease({ name, namespace });
    } catch (err) {
      if (statusCodeOf(err) !== 404) return { ok: false, why: `reading the Lease: ${describeApiError(err)}` };
      try {
        const created = await api.createNamespacedLease({ namespace, body: { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name, namespace }, spec: this.spec(now, now, 0) } });
        this.observe(created, now);
        return { ok: true };
      } catch (createErr) {
        return { ok: false, why: `creating the Lease: ${describeApiError(createErr)}` };
      }
    }
    this.observe(lease, now);
    const observed = this.observed!;
    const mine = observed.holder === identity;
    if (observed.holder !== '' && !mine && observed.at + observed.durationSeconds * 1000 > now) {
      return { ok: false, heldBy: observed.holder, why: `held by ${observed.holder}` };
    }
    const spec = lease.spec ?? {};
    const acquireTime = mine && spec.acquireTime ? toMicroTime(spec.acquireTime) : now;
    const transitions = (spec.leaseTransitions ?? 0) + (mine ? 0 : 1);
    try {
      const replaced = await api.replaceNamespacedLease({
        name,
        namespace,
        body: { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { ...lease.metadata, name, namespace }, spec: this.spec(now, acquireTime, transitions) },
      });
      this.observe(replaced, now);
      return { ok: true };
    } catch (err) {
      // 409: someone wrote the Lease since we read it; the next read shows who.
      return { ok: false, why: `writing the Lease: ${describeApiError(err)}` };
    }
  }

  /** Gives the Lease up so a follower need not wait for it to expire. */
  private async release(): Promise<void> {
    const { api, namespace, name, identity, log } = this.options;
    try {
      const lease = await this.withTimeout(api.readNamespacedLease({ name, namespace }), this.options.timings.renewDeadlineMs);
      if (lease.spec?.holderIdentity !== identity) return;
      const now = this.now();
      await this.withTimeout(
        api.replaceNamespacedLease({
          name,
          namespace,
          body: {
            apiVersion: 'coordination.k8s.io/v1',
            kind: 'Lease',
            metadata: lease.metadata,
            spec: { holderIdentity: '', leaseDurationSeconds: 1, acquireTime: new (orchLibrary().V1MicroTime)(now), renewTime: new (orchLibrary().V1MicroTime)(now), leaseTransitions: lease.spec?.leaseTransitions ?? 0 },
          },
        }),
        this.options.timings.renewDeadlineMs,
      );
      log.info(`released Lease ${this.where()}`);
    } catch (err) {
      log.warn(`releasing Lease ${this.where()} failed (it expires by itself): ${describeApiError(err)}`);
    }
  }

  private spec(now: number, acquireTime: number | V1MicroTime, transitions: number): V1Lease['spec'] {
    return {
      holderIdentity: this.options.identity,
      leaseDurationSeconds: Math.ceil(this.options.timings.leaseDurationMs / 1000),
      // MicroTime: the API server wants six fractional digits, which V1MicroTime writes.
      acquireTime: typeof acquireTime === 'number' ? new (orchLibrary().V1MicroTime)(acquireTime) : acquireTime,
      renewTime: new (orchLibrary().V1MicroTime)(now),
      leaseTransitions: transitions,
    };
  }

  private observe(lease: V1Lease, now: number): void {
    const spec = lease.spec ?? {};
    const holder = spec.holderIdentity ?? '';
    const key = JSON.stringify([holder, String(spec.renewTime ?? ''), String(spec.acquireTime ?? ''), spec.leaseTransitions ?? 0]);
    if (this.observed?.key !== key) this.observed = { holder, durationSeconds: spec.leaseDurationSeconds ?? 0, key, at: now };
  }

  private async callback(which: string, fn: () => Promise<void> | void): Promise<void> {
    try {
      await fn();
    } catch (err) {
      this.options.log.error(`Lease ${this.where()}: ${which}-leading callback failed: ${describeApiError(err)}`);
    }
  }

  private withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer from the orchestrator API within ${ms} ms`)), ms);
    });
    return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
  }

  private where(): string {
    return `${this.options.namespace}/${this.options.name}`;
  }
}

type Outcome = { ok: true } | { ok: false; why: string; heldBy?: string };

/** A time read back from the API server (a string) or set by us, kept as MicroTime. */
function toMicroTime(value: Date | string): V1MicroTime {
  return new (orchLibrary().V1MicroTime)(typeof value === 'string' ? Date.parse(value) : value.getTime());
}

/** An error of the orchestrator API as `status: message` (the Status message when the body is one). */
export function describeApiError(err: unknown): string {
  const status = statusCodeOf(err);
  const body = (err as { body?: unknown } | undefined)?.body;
  let message = (err as Error | undefined)?.message ?? String(err);
  if (typeof body === 'string') {
    try {
      message = (JSON.parse(body) as { message?: string }).message ?? message;
    } catch {
      // not a Status: keep the error's own message
    }
  } else if (body && typeof body === 'object' && typeof (body as { message?: unknown }).message === 'string') {
    message = (body as { message: string }).message;
  }
  return status ? `${status}: ${message}` : message;
}

import { XdsResource } from '../model/generator';
import { Semaphore } from '../shared/semaphore';

/**
 * The memory bound for thousands of streams asking at once (a connect storm), one per server
 * and shared by all its streams: a response is generated only with one of a few preparation
 * slots, encoded only when its bytes fit in the write budget, and its slot is free again as
 * soon as its write has started; its bytes when the socket has them. A slow reader holds only
 * its bytes, never a slot.
 *
 * Apart from the streams because it is not about any one of them: it is what makes the
 * daemon's memory depend on these two numbers instead of on how many proxies connect.
 */

/**
 * Enough to keep loopback and LAN links busy with a few large responses in flight, small
 * enough that a connect storm of thousands of proxies costs memory by this, not by their number.
 */
const DEFAULT_MAX_BYTES_IN_FLIGHT = 64 * 1024 * 1024;
/** Enough to overlap generation with writing on a few cores. */
const DEFAULT_RESPONSES_IN_PREPARATION = 16;

export class WriteBudget {
  private readonly preparing: Semaphore;
  private readonly bytes: Semaphore;

  constructor(maxResponsesInPreparation?: number, maxBytesInFlight?: number) {
    this.preparing = new Semaphore(maxResponsesInPreparation ?? DEFAULT_RESPONSES_IN_PREPARATION);
    this.bytes = new Semaphore(maxBytesInFlight ?? DEFAULT_MAX_BYTES_IN_FLIGHT);
  }

  /** The most response bytes handed to gRPC and not yet taken by the socket. */
  get maxBytesInFlight(): number {
    return this.bytes.capacity;
  }

  /**
   * Waits for a preparation slot and returns what frees it. Freeing is idempotent, so the
   * slot can go as soon as the write has started and again, harmlessly, when the response is done.
   */
  async startPreparing(): Promise<() => void> {
    await this.preparing.acquire();
    return this.preparingSlot();
  }

  /** startPreparing without waiting: the slot when one is free now, undefined otherwise (a push to thousands of proxies mostly finds one). */
  startPreparingNow(): (() => void) | undefined {
    return this.preparing.tryAcquire() ? this.preparingSlot() : undefined;
  }

  private preparingSlot(): () => void {
    let prepared = false;
    return () => {
      if (prepared) return;
      prepared = true;
      this.preparing.release();
    };
  }

  /**
   * Waits until a response of `typeUrl` carrying `resources` fits in the bytes in flight, and
   * returns the bytes reserved: `release` them once the socket has the response.
   */
  async reserve(typeUrl: string, resources: readonly XdsResource[], runs?: readonly (readonly XdsResource[])[]): Promise<number> {
    const reserved = responseSize(typeUrl, resources, runs);
    await this.bytes.acquire(reserved);
    return reserved;
  }

  /** reserve without waiting: the bytes reserved when they fit now, undefined otherwise. */
  reserveNow(typeUrl: string, resources: readonly XdsResource[], runs?: readonly (readonly XdsResource[])[]): number | undefined {
    const reserved = responseSize(typeUrl, resources, runs);
    return this.bytes.tryAcquire(reserved) ? reserved : undefined;
  }

  release(reserved: number): void {
    this.bytes.release(reserved);
  }
}

/** About what a response takes besides its resources. */
const RESPONSE_OVERHEAD = 256;

function responseSize(typeUrl: string, resources: readonly XdsResource[], runs?: readonly (readonly XdsResource[])[]): number {
  let size = RESPONSE_OVERHEAD;
  if (runs) for (const run of runs) size += runSize(typeUrl, run);
  else size += estimatedSize(typeUrl, resources);
  return size;
}

/** About what `resources` take in a response once encoded (the Any wrapping, names, versions). */
function estimatedSize(typeUrl: string, resources: readonly XdsResource[]): number {
  let bytes = 0;
  for (const r of resources) bytes += r.body.length + r.name.length + typeUrl.length + 48;
  return bytes;
}

/** estimatedSize of a shared run (see concatRuns), once per run and type. */
const runSizes = new WeakMap<readonly XdsResource[], { typeUrl: string; bytes: number }>();

function runSize(typeUrl: string, run: readonly XdsResource[]): number {
  const known = runSizes.get(run);
  if (known?.typeUrl === typeUrl) return known.bytes;
  const bytes = estimatedSize(typeUrl, run);
  runSizes.set(run, { typeUrl, bytes });
  return bytes;
}

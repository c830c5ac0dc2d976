import type { Counter, Gauge, Histogram } from '../shared/prom-client';

type Labels = Partial<Record<string, string | number>>;

/**
 * Observations made on a hot path, folded into their metrics later. A push to 2,000 proxies
 * records about seven observations per response (pilot_xds_pushes, pilot_xds_push_time,
 * pilot_xds_config_size_bytes, ...), and prom-client checks and hashes the labels of every one
 * of them: microseconds per proxy spent while the proxies wait for the push. Here an
 * observation is three array writes; the metrics get them before anything reads them (the
 * metrics' `collect` hook calls `flush`) and otherwise within FLUSH_AFTER_MS, after the push.
 * Counter increments are summed per label set first, so a fan-out costs a few `inc` calls.
 *
 * A gauge set on a hot path (the xDS cache's size, on every miss) keeps only its latest value
 * per label set until the flush.
 *
 * Labels are told apart by object identity when summing: callers pass one label object per
 * label set (see `labelsOf`), not a new object per call.
 */
export class DeferredMetrics {
  private metrics: (Counter<string> | Histogram<string>)[] = [];
  private labels: (Labels | undefined)[] = [];
  private values: number[] = [];
  /** Which entries are counter increments (the rest are histogram observations). */
  private counts: boolean[] = [];
  /** Latest value per gauge and label set, not yet set. */
  private gauges = new Map<Gauge<string>, Map<Labels | undefined, number>>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly flushAfterMs = FLUSH_AFTER_MS,
    private readonly maxPending = MAX_PENDING,
  ) {}

  inc(counter: Counter<string>, labels: Labels | undefined, value = 1): void {
    this.add(counter, labels, value, true);
  }

  observe(histogram: Histogram<string>, labels: Labels | undefined, value: number): void {
    this.add(histogram, labels, value, false);
  }

  /** Sets `gauge` to `value` at the flush, unless it is set again before. */
  set(gauge: Gauge<string>, labels: Labels | undefined, value: number): void {
    let byLabels = this.gauges.get(gauge);
    if (!byLabels) this.gauges.set(gauge, (byLabels = new Map()));
    byLabels.set(labels, value);
    this.schedule();
  }

  /** Observations and gauge values waiting to be folded in (for tests). */
  get pending(): number {
    let gauges = 0;
    for (const byLabels of this.gauges.values()) gauges += byLabels.size;
    return this.values.length + gauges;
  }

  /** Folds every pending observation into its metric now. */
  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const { metrics, labels, values, counts, gauges } = this;
    if (values.length === 0 && gauges.size === 0) return;
    // Swapped out first: a metric's own collect hook calls flush again while this one runs.
    this.metrics = [];
    this.labels = [];
    this.values = [];
    this.counts = [];
    this.gauges = new Map();
    for (const [gauge, byLabels] of gauges) {
      for (const [l, value] of byLabels) {
        if (l) gauge.set(l, value);
        else gauge.set(value);
      }
    }
    const sums = new Map<Counter<string>, Map<Labels | undefined, number>>();
    for (let i = 0; i < values.length; i++) {
      if (counts[i]) {
        const counter = metrics[i] as Counter<string>;
        let byLabels = sums.get(counter);
        if (!byLabels) sums.set(counter, (byLabels = new Map()));
        byLabels.set(labels[i], (byLabels.get(labels[i]) ?? 0) + values[i]);
      } else {
        const histogram = metrics[i] as Histogram<string>;
        const l = labels[i];
        if (l) histogram.observe(l, values[i]);
        else histogram.observe(values[i]);
      }
    }
    for (const [counter, byLabels] of sums) {
      for (const [l, sum] of byLabels) {
        if (l) counter.inc(l, sum);
        else counter.inc(sum);
      }
    }
  }

  private add(metric: Counter<string> | Histogram<string>, labels: Labels | undefined, value: number, count: boolean): void {
    this.metrics.push(metric);
    this.labels.push(labels);
    this.values.push(value);
    this.counts.push(count);
    if (this.values.length >= this.maxPending) {
      this.flush();
      return;
    }
    this.schedule();
  }

  private schedule(): void {
    if (!this.timer) {
      this.timer = setTimeout(() => this.flush(), this.flushAfterMs);
      this.timer.unref();
    }
  }
}

/** How long an observation may wait: longer than a push to thousands of proxies takes, shorter than a scrape interval. */
const FLUSH_AFTER_MS = 1000;
/** Observations held at most (about 2 MB), whatever the timer: a connect storm's records cannot pile up. */
const MAX_PENDING = 65_536;

/** One frozen label object per value of one label, for DeferredMetrics' summing by identity. */
export function labelsOf<K extends string>(name: K): (value: string) => Readonly<Record<K, string>> {
  const known = new Map<string, Readonly<Record<K, string>>>();
  return (value) => {
    let labels = known.get(value);
    if (!labels) known.set(value, (labels = Object.freeze({ [name]: value } as Record<K, string>)));
    return labels;
  };
}

/**
 * Durations in the spec's form (Go's `time.Duration` syntax): `100ms`, `1h0m0s`,
 * `2562047h47m16.854775807s`. Kept as integer nanoseconds in a bigint so the largest
 * value the spec uses round-trips exactly.
 */
const UNIT_NANOS: Record<string, bigint> = {
  ns: 1n,
  us: 1_000n,
  'µs': 1_000n,
  'μs': 1_000n,
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
};
const MAX_NANOS = (1n << 63n) - 1n;
const COMPONENT = /^(\d*)(?:\.(\d*))?(ns|us|µs|μs|ms|s|m|h)/;

export class Duration {
  static readonly ZERO = new Duration(0n);

  private constructor(readonly nanos: bigint) {}

  static fromNanos(nanos: bigint): Duration {
    if (nanos > MAX_NANOS || nanos < -MAX_NANOS - 1n) throw new RangeError(`duration out of range: ${nanos}ns`);
    return new Duration(nanos);
  }

  static fromMillis(ms: number): Duration {
    return Duration.fromNanos(BigInt(Math.round(ms * 1e6)));
  }

  static fromSeconds(s: number): Duration {
    return Duration.fromNanos(BigInt(Math.round(s * 1e9)));
  }

  /** Parses Go duration syntax; throws a RangeError naming the input when it is not one. */
  static parse(text: string): Duration {
    let rest = text.trim();
    if (rest === '') throw new RangeError(`invalid duration "${text}"`);
    let sign = 1n;
    if (rest[0] === '-' || rest[0] === '+') {
      if (rest[0] === '-') sign = -1n;
      rest = rest.slice(1);
    }
    if (rest === '0') return Duration.ZERO;
    if (rest === '') throw new RangeError(`invalid duration "${text}"`);
    let total = 0n;
    while (rest.length > 0) {
      const m = COMPONENT.exec(rest);
      if (!m || (m[1] === '' && (m[2] === undefined || m[2] === ''))) {
        throw new RangeError(`invalid duration "${text}"`);
      }
      const unit = UNIT_NANOS[m[3]];
      total += BigInt(m[1] || '0') * unit;
      if (m[2]) {
        // Fractional part, exact to the nanosecond (further digits are truncated, as Go does).
        const digits = m[2].slice(0, 18);
        total += (BigInt(digits) * unit) / 10n ** BigInt(digits.length);
      }
      if (total > MAX_NANOS + 1n) throw new RangeError(`invalid duration "${text}": out of range`);
      rest = rest.slice(m[0].length);
    }
    const signed = sign * total;
    if (signed > MAX_NANOS) throw new RangeError(`invalid duration "${text}": out of range`);
    return new Duration(signed);
  }

  get milliseconds(): number {
    return Number(this.nanos) / 1e6;
  }

  get seconds(): number {
    return Number(this.nanos) / 1e9;
  }

  equals(other: Duration): boolean {
    return this.nanos === other.nanos;
  }

  /** Formats like Go's Duration.String: `0s`, `100ms`, `1.5µs`, `1h0m0s`. */
  toString(): string {
    if (this.nanos === 0n) return '0s';
    const negative = this.nanos < 0n;
    let u = negative ? -this.nanos : this.nanos;
    let out: string;
    if (u < 1_000_000_000n) {
      const [unit, scale] = u < 1_000n ? ['ns', 1n] : u < 1_000_000n ? ['µs', 1_000n] : ['ms', 1_000_000n];
      out = fixed(u, scale) + unit;
    } else {
      const hours = u / UNIT_NANOS.h;
      u %= UNIT_NANOS.h;
      const minutes = u / UNIT_NANOS.m;
      u %= UNIT_NANOS.m;
      out = fixed(u, UNIT_NANOS.s) + 's';
      if (hours > 0n) out = `${hours}h${minutes}m${out}`;
      else if (minutes > 0n) out = `${minutes}m${out}`;
    }
    return negative ? '-' + out : out;
  }

  toJSON(): string {
    return this.toString();
  }
}

/** `value / scale` as a decimal without trailing zeros. */
function fixed(value: bigint, scale: bigint): string {
  const whole = value / scale;
  let frac = (value % scale).toString().padStart(scale.toString().length - 1, '0');
  frac = frac.replace(/0+$/, '');
  return frac ? `${whole}.${frac}` : `${whole}`;
}

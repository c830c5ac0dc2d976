/**
 * Resource quantities in the orchestrator's canonical form (`2000m` is `2`, `1024Mi` is `1Gi`,
 * `0.5` is `500m`), as its serializer writes them: the suffix family of the input is kept
 * (binary, decimal SI, or decimal exponent), with the largest unit that keeps the number whole.
 */

const BINARY: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const DECIMAL: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const DECIMAL_SUFFIX: Record<number, string> = Object.fromEntries(Object.entries(DECIMAL).map(([s, e]) => [e, s]));
const BINARY_SUFFIX: Record<number, string> = Object.fromEntries(Object.entries(BINARY).map(([s, e]) => [e, s]));

export class QuantityError extends Error {}

interface Parsed {
  negative: boolean;
  /** The value is mantissa × 10^exp10 (exact decimal). */
  mantissa: bigint;
  exp10: number;
  format: 'binary' | 'decimalSI' | 'decimalExponent';
}

const PATTERN = /^([+-]?)(\d*)(?:\.(\d*))?(?:(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])|[eE]([+-]?\d+))?$/;

function parse(text: string): Parsed {
  const m = PATTERN.exec(text.trim());
  if (!m || (m[2] === '' && (m[3] ?? '') === '')) throw new QuantityError(`quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$': ${JSON.stringify(text)}`);
  const [, sign, whole, frac = '', suffix, exponent] = m;
  let mantissa = BigInt((whole || '0') + frac);
  let exp10 = -frac.length;
  let format: Parsed['format'] = 'decimalSI';
  if (suffix !== undefined && suffix in BINARY) {
    format = 'binary';
    mantissa *= 2n ** BigInt(BINARY[suffix]);
  } else if (suffix !== undefined) {
    exp10 += DECIMAL[suffix];
  } else if (exponent !== undefined) {
    format = 'decimalExponent';
    exp10 += Number(exponent);
  }
  // The orchestrator keeps nano precision, rounding up.
  if (exp10 < -9) {
    const divisor = 10n ** BigInt(-9 - exp10);
    mantissa = (mantissa + divisor - 1n) / divisor;
    exp10 = -9;
  }
  return { negative: sign === '-' && mantissa !== 0n, mantissa, exp10, format };
}

/** The canonical text of a quantity; throws QuantityError for text that is not one. */
export function canonicalQuantity(text: string): string {
  const q = parse(text);
  let { mantissa, exp10 } = q;
  if (mantissa === 0n) return '0';
  // Normalize: strip trailing decimal zeros into the exponent.
  while (mantissa % 10n === 0n) {
    mantissa /= 10n;
    exp10++;
  }
  const sign = q.negative ? '-' : '';
  let format = q.format;
  if (format === 'binary') {
    const isInteger = exp10 >= 0;
    const value = isInteger ? mantissa * 10n ** BigInt(exp10) : 0n;
    if (!isInteger || value < 1024n) format = 'decimalSI';
    else {
      let n = value;
      let e = 0;
      while (e < 60 && n % 1024n === 0n) {
        n /= 1024n;
        e += 10;
      }
      return `${sign}${n}${BINARY_SUFFIX[e] ?? ''}`;
    }
  }
  // Decimal: an exponent that is a multiple of 3, as large as keeps the mantissa whole.
  let e3 = Math.floor(exp10 / 3) * 3;
  let n = mantissa * 10n ** BigInt(exp10 - e3);
  while (e3 < 18 && n % 1000n === 0n) {
    n /= 1000n;
    e3 += 3;
  }
  if (e3 > 18) {
    n *= 10n ** BigInt(e3 - 18);
    e3 = 18;
  }
  if (format === 'decimalExponent') return `${sign}${n}${e3 === 0 ? '' : `e${e3}`}`;
  return `${sign}${n}${DECIMAL_SUFFIX[e3]}`;
}

/** Canonical quantities in a container's or pod's resources, in place; bad ones are left as they are. */
export function canonicalizeResources(resources: unknown): void {
  if (!resources || typeof resources !== 'object') return;
  for (const key of ['limits', 'requests']) {
    const list = (resources as Record<string, unknown>)[key];
    if (list && typeof list === 'object' && !Array.isArray(list)) canonicalizeList(list as Record<string, unknown>);
  }
}

export function canonicalizeList(list: Record<string, unknown>): void {
  for (const [name, value] of Object.entries(list)) {
    if (typeof value !== 'string' && typeof value !== 'number') continue;
    try {
      list[name] = canonicalQuantity(String(value));
    } catch {
      // Not a quantity: validation elsewhere reports it.
    }
  }
}

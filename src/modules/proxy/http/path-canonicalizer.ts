/**
 * RFC 3986 path canonicalization as Envoy's `normalize_path` does it (PathUtil::canonicalPath,
 * which runs Chromium's URL path canonicalizer on the part of `:path` before `?`):
 *
 * - `.` and `..` segments are resolved, also when their dots are written `%2e`/`%2E`, and a
 *   backslash counts as a slash; `..` never climbs above the root;
 * - percent-encoded unreserved characters (`A-Z a-z 0-9 - . _ ~`) are decoded (`%73` → `s`),
 *   other escapes are kept exactly as written (`%2f` stays `%2f`), and a `%` not followed by
 *   two hex digits is kept;
 * - characters that may not appear raw in a path (space, `"`, `#`, `<`, `>`, `\`` ...) are
 *   percent-encoded; a NUL, raw or as `%00`, makes the path invalid (Envoy answers 400);
 * - `/./` or `/../` written with a path parameter (`/..;x/`) lose the parameter first, so they
 *   resolve as dot segments (Envoy's `strip_dotdot_segments_with_parameters`, on by default).
 *
 * Slashes are not merged here: that is `merge_slashes`, a separate step.
 */

/** What the canonicalizer does with each byte (Chromium's kPathCharLookup classes). */
const enum ByteClass {
  /** Copied as is. */
  Pass,
  /** Copied as is, and decoded when it arrives percent-encoded. */
  Unreserved,
  /** Percent-encoded in the output. */
  Escape,
  /** Makes the path invalid. */
  Invalid,
  /** `.`: may start a dot segment. */
  Dot,
}

const BYTE_CLASS: ByteClass[] = (() => {
  const table = new Array<ByteClass>(256).fill(ByteClass.Escape);
  table[0] = ByteClass.Invalid;
  for (const c of "!$&'()*+,/:;=@[]") table[c.charCodeAt(0)] = ByteClass.Pass;
  for (const c of '-_~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz') table[c.charCodeAt(0)] = ByteClass.Unreserved;
  table[0x2e] = ByteClass.Dot;
  return table;
})();

const SLASH = 0x2f;
const BACKSLASH = 0x5c;
const PERCENT = 0x25;
const DOT = 0x2e;

const isSlash = (b: number | undefined): boolean => b === SLASH || b === BACKSLASH;

function hexValue(b: number | undefined): number {
  if (b === undefined) return -1;
  if (b >= 0x30 && b <= 0x39) return b - 0x30;
  if (b >= 0x41 && b <= 0x46) return b - 0x41 + 10;
  if (b >= 0x61 && b <= 0x66) return b - 0x61 + 10;
  return -1;
}

/** The byte `%XY` at `at` stands for, or -1 when it is not a complete escape. */
function escapedByte(bytes: ArrayLike<number>, at: number, end: number): number {
  if (at + 3 > end) return -1;
  const high = hexValue(bytes[at + 1]);
  const low = hexValue(bytes[at + 2]);
  return high < 0 || low < 0 ? -1 : high * 16 + low;
}

/** Length of the dot at `at`: 1 for `.`, 3 for `%2e`/`%2E`, 0 when there is none. */
function dotLength(bytes: Uint8Array, at: number, end: number): number {
  if (bytes[at] === DOT) return 1;
  if (bytes[at] === PERCENT && at + 3 <= end && bytes[at + 1] === 0x32 && (bytes[at + 2] === 0x65 || bytes[at + 2] === 0x45)) return 3;
  return 0;
}

type DotSegment = { kind: 'none' } | { kind: 'current' | 'parent'; consumed: number };

/** After a dot that follows a slash: is it `.`, `..` (with their trailing slash), or a name? */
function classifyAfterDot(bytes: Uint8Array, afterDot: number, end: number): DotSegment {
  if (afterDot === end) return { kind: 'current', consumed: 0 };
  if (isSlash(bytes[afterDot])) return { kind: 'current', consumed: 1 };
  const second = dotLength(bytes, afterDot, end);
  if (second > 0) {
    const afterSecond = afterDot + second;
    if (afterSecond === end) return { kind: 'parent', consumed: second };
    if (isSlash(bytes[afterSecond])) return { kind: 'parent', consumed: second + 1 };
  }
  return { kind: 'none' };
}

const HEX = '0123456789ABCDEF';

/** The canonical output, as bytes. */
class Output {
  private readonly bytes: number[] = [];

  get length(): number {
    return this.bytes.length;
  }

  at(i: number): number {
    return this.bytes[i];
  }

  last(): number | undefined {
    return this.bytes[this.bytes.length - 1];
  }

  push(b: number): void {
    this.bytes.push(b);
  }

  set(i: number, b: number): void {
    this.bytes[i] = b;
  }

  truncate(length: number): void {
    this.bytes.length = length;
  }

  pushEscaped(b: number): void {
    this.bytes.push(PERCENT, HEX.charCodeAt(b >> 4), HEX.charCodeAt(b & 0xf));
  }

  view(): number[] {
    return this.bytes;
  }

  toString(): string {
    return Buffer.from(this.bytes).toString('latin1');
  }

  /** Back to the slash before the last segment (the output ends with a slash); never above the first. */
  backUpOneSegment(): void {
    let i = this.bytes.length - 1;
    if (i === 0) return;
    i--;
    while (i > 0 && this.bytes[i] !== SLASH) i--;
    this.truncate(i + 1);
  }
}

/**
 * After decoding an escape within two characters of an earlier stray `%`, the output may now
 * read as a different escape (`%%30` → `%0` → with the next `0`, `%00`). That `%` becomes `%25`
 * so the output cannot be read back as something the input was not.
 */
function escapeNestedPercent(input: Uint8Array, nextInput: number, end: number, percentAt: number, out: Output): void {
  const length = out.length;
  const justDecoded = out.at(length - 1);
  const withNext = percentAt === length - 2;
  if (withNext) {
    if (nextInput === end || input[nextInput] >= 0x80) return;
    out.push(input[nextInput]);
  }
  if (escapedByte(out.view(), percentAt, out.length) >= 0) {
    if (!withNext) out.push(out.at(percentAt + 1));
    out.set(percentAt + 1, 0x32);
    out.set(percentAt + 2, 0x35);
    out.push(justDecoded);
  } else if (withNext) {
    out.truncate(length);
  }
}

/**
 * `/..;x/` → `/../`, `/.;x` → `/.`: a parameter must not hide a dot segment (Envoy's fix of
 * CVE-2026-73551). A fragment (kept only in the unsafe mode) is left alone, as Envoy does.
 */
function stripDotSegmentParameters(path: string): string {
  const hash = path.indexOf('#');
  const beforeFragment = hash < 0 ? path : path.slice(0, hash);
  if (!beforeFragment.includes('.;')) return path;
  const stripped = beforeFragment
    .split('/')
    .map((segment) => (segment.startsWith('..;') ? '..' : segment.startsWith('.;') ? '.' : segment))
    .join('/');
  return hash < 0 ? stripped : stripped + path.slice(hash);
}

/**
 * The canonical form of a path (no query: the caller splits it off), or undefined when the
 * path is invalid. Non-ASCII text, which an HTTP/1 parser does not hand over, is taken as UTF-8.
 */
export function canonicalizePath(path: string): string | undefined {
  const input = Buffer.from(stripDotSegmentParameters(path), 'utf8');
  const end = input.length;
  const out = new Output();
  if (end === 0 || !isSlash(input[0])) out.push(SLASH);
  let valid = true;
  let strayPercentAt = Number.MIN_SAFE_INTEGER;
  for (let i = 0; i < end; i++) {
    const b = input[i];
    const cls = BYTE_CLASS[b];
    if (cls === ByteClass.Pass || cls === ByteClass.Unreserved) {
      out.push(b);
      continue;
    }
    const dot = dotLength(input, i, end);
    if (dot > 0) {
      if (out.last() !== SLASH) {
        out.push(DOT);
        i += dot - 1;
        continue;
      }
      const segment = classifyAfterDot(input, i + dot, end);
      if (segment.kind === 'none') {
        out.push(DOT);
        i += dot - 1;
      } else {
        if (segment.kind === 'parent') out.backUpOneSegment();
        i += dot + segment.consumed - 1;
      }
    } else if (b === BACKSLASH) {
      out.push(SLASH);
    } else if (b === PERCENT) {
      const decoded = escapedByte(input, i, end);
      if (decoded < 0) {
        strayPercentAt = out.length;
        out.push(PERCENT);
        continue;
      }
      i += 2;
      if (BYTE_CLASS[decoded] === ByteClass.Unreserved) {
        out.push(decoded);
        if (strayPercentAt >= out.length - 3) escapeNestedPercent(input, i + 1, end, strayPercentAt, out);
      } else {
        // Kept as written (case included): a server may care about the case of hex digits.
        out.push(PERCENT);
        out.push(input[i - 1]);
        out.push(input[i]);
        if (BYTE_CLASS[decoded] === ByteClass.Invalid) valid = false;
      }
    } else {
      out.pushEscaped(b);
      if (cls === ByteClass.Invalid) valid = false;
    }
  }
  return valid ? out.toString() : undefined;
}

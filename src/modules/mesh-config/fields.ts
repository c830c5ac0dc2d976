/**
 * Typed reading of one YAML/JSON config document (the mesh config, ProxyConfig, mesh
 * networks): every error names where the document came from and the field path
 * (`--meshConfig /x/mesh.yaml: defaultConfig.proxyAdminPort: must be a port number...`), and
 * fields the reader does not know are collected as warnings rather than refused.
 */
import { Duration } from '../settings/duration';
import { UserError } from '../shared/user-error';

/** A config document that cannot be used; the message names its source and the field. */
export class MeshConfigError extends UserError {}

export type Mapping = Record<string, unknown>;

export function isMapping(value: unknown): value is Mapping {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `a.b`, `a[2]`: the path of a field below `parent`. */
export function fieldPath(parent: string, key: string | number): string {
  if (typeof key === 'number') return `${parent}[${key}]`;
  return parent === '' ? key : `${parent}.${key}`;
}

/** A DNS-1123 label: lower-case letters, digits and inner dashes, at most 63 characters. */
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

export function isDnsLabel(text: string): boolean {
  return DNS_LABEL.test(text);
}

/** The incumbent's trust domain rule: dot-separated DNS labels, the last one may be empty (`example.org.`). */
export function isTrustDomain(text: string): boolean {
  if (text === '' || text.length > 255) return false;
  const labels = text.split('.');
  return labels.every((label, i) => (i === labels.length - 1 && i > 0 && label === '') || isDnsLabel(label));
}

/** `host:port` with a port from 1 to 65535 and a DNS name or IP as host; the reason when it is not. */
export function hostPortProblem(text: string): string | undefined {
  const m = /^(\[[^\]]+\]|[^:[\]]+):(\d+)$/.exec(text);
  if (!m) return `${JSON.stringify(text)} is not host:port`;
  const port = Number(m[2]);
  if (port < 1 || port > 65535) return `port ${m[2]} of ${JSON.stringify(text)} must be from 1 to 65535`;
  const host = m[1].replace(/^\[|\]$/g, '');
  const ipv4 = /^\d{1,3}(\.\d{1,3}){3}$/.test(host) && host.split('.').every((o) => Number(o) <= 255);
  const ipv6 = host.includes(':') && /^[0-9a-fA-F:.]+$/.test(host);
  const dns = host.split('.').every((l, i, all) => isDnsLabel(l.toLowerCase()) || (i === all.length - 1 && l === '' && i > 0));
  if (!ipv4 && !ipv6 && !dns) return `${JSON.stringify(host)} is not a valid host name or IP address`;
  return undefined;
}

/**
 * Reads fields of one document. `fail` throws MeshConfigError; `warn` records a warning the
 * caller logs (an unknown field, a value that is kept but probably not what was meant).
 */
export class FieldReader {
  readonly warnings: string[] = [];

  constructor(readonly where: string) {}

  fail(path: string, why: string): never {
    throw new MeshConfigError(path === '' ? `${this.where}: ${why}` : `${this.where}: ${path}: ${why}`);
  }

  warn(path: string, why: string): void {
    this.warnings.push(path === '' ? `${this.where}: ${why}` : `${this.where}: ${path}: ${why}`);
  }

  /** Absent and null read as undefined everywhere: the field keeps its default. */
  mapping(value: unknown, path: string, what = 'a mapping'): Mapping | undefined {
    if (value === undefined || value === null) return undefined;
    if (!isMapping(value)) this.fail(path, `must be ${what}`);
    return value;
  }

  list(value: unknown, path: string, what = 'a list'): unknown[] | undefined {
    if (value === undefined || value === null) return undefined;
    if (!Array.isArray(value)) this.fail(path, `must be ${what}`);
    return value;
  }

  string(value: unknown, path: string, options: { nonEmpty?: boolean } = {}): string | undefined {
    if (value === undefined || value === null) return undefined;
    if (typeof value !== 'string') this.fail(path, 'must be a string');
    if (options.nonEmpty && value.trim() === '') this.fail(path, 'must not be empty');
    return value;
  }

  bool(value: unknown, path: string): boolean | undefined {
    if (value === undefined || value === null) return undefined;
    // Wrapped booleans (BoolValue) may be written `{ value: true }` in the proto's JSON form.
    if (isMapping(value) && Object.keys(value).length === 1 && typeof value.value === 'boolean') return value.value;
    if (typeof value !== 'boolean') this.fail(path, 'must be true or false');
    return value;
  }

  /** An integer from `min` to `max`; numeric strings count (the proto JSON form of int64/uint32). */
  int(value: unknown, path: string, min: number, max: number): number | undefined {
    if (value === undefined || value === null) return undefined;
    const n = typeof value === 'string' && /^-?\d+$/.test(value.trim()) ? Number(value) : value;
    if (typeof n !== 'number' || !Number.isInteger(n)) this.fail(path, `must be an integer, not ${JSON.stringify(value)}`);
    if (n < min || n > max) this.fail(path, `must be from ${min} to ${max}, not ${n}`);
    return n;
  }

  port(value: unknown, path: string, min = 1): number | undefined {
    if (value === undefined || value === null) return undefined;
    const n = typeof value === 'string' && /^\d+$/.test(value.trim()) ? Number(value) : value;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < min || n > 65535) this.fail(path, `must be a port number from ${min} to 65535, not ${JSON.stringify(value)}`);
    return n;
  }

  number(value: unknown, path: string, min: number, max: number): number | undefined {
    if (value === undefined || value === null) return undefined;
    if (typeof value !== 'number' || !Number.isFinite(value)) this.fail(path, `must be a number, not ${JSON.stringify(value)}`);
    if (value < min || value > max) this.fail(path, `must be from ${min} to ${max}, not ${value}`);
    return value;
  }

  /** One of `allowed`; case-insensitive, as the incumbent's enums are read. */
  oneOf<T extends string>(value: unknown, path: string, allowed: readonly T[]): T | undefined {
    if (value === undefined || value === null) return undefined;
    const text = typeof value === 'string' ? value.toUpperCase() : undefined;
    const found = allowed.find((a) => a.toUpperCase() === text);
    if (found === undefined) this.fail(path, `must be one of ${allowed.join(', ')}, not ${JSON.stringify(value)}`);
    return found;
  }

  /** A duration (`10s`, `100ms`, `1h0m0s`, or the proto JSON form `0.5s`), in milliseconds. */
  durationMs(value: unknown, path: string, options: { min?: number; max?: number } = {}): number | undefined {
    const text = this.durationText(value, path);
    if (text === undefined) return undefined;
    return this.checkRange(Duration.parse(text).milliseconds, path, options);
  }

  /** A duration kept as written (checked to parse), for fields passed on as text. */
  durationText(value: unknown, path: string): string | undefined {
    if (value === undefined || value === null) return undefined;
    if (isMapping(value) && ('seconds' in value || 'nanos' in value)) {
      const seconds = this.int(value.seconds ?? 0, fieldPath(path, 'seconds'), 0, Number.MAX_SAFE_INTEGER)!;
      const nanos = this.int(value.nanos ?? 0, fieldPath(path, 'nanos'), 0, 999_999_999)!;
      return `${seconds}s${nanos ? `${nanos}ns` : ''}`;
    }
    if (typeof value !== 'string') this.fail(path, `must be a duration such as 10s or 100ms, not ${JSON.stringify(value)}`);
    try {
      const d = Duration.parse(value);
      if (d.nanos < 0n) this.fail(path, `must not be negative, not ${JSON.stringify(value)}`);
    } catch (err) {
      if (err instanceof MeshConfigError) throw err;
      this.fail(path, `must be a duration such as 10s or 100ms, not ${JSON.stringify(value)}`);
    }
    return value.trim();
  }

  stringList(value: unknown, path: string, check?: (item: string, itemPath: string) => void): string[] | undefined {
    const list = this.list(value, path, 'a list of strings');
    if (list === undefined) return undefined;
    return list.map((item, i) => {
      const itemPath = fieldPath(path, i);
      if (typeof item !== 'string') this.fail(itemPath, 'must be a string');
      check?.(item, itemPath);
      return item;
    });
  }

  /** A map of strings to strings; numbers and booleans are kept as their text, as YAML users write them. */
  stringMap(value: unknown, path: string): Record<string, string> | undefined {
    const map = this.mapping(value, path, 'a mapping of strings');
    if (map === undefined) return undefined;
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(map)) {
      if (typeof v === 'string') out[k] = v;
      else if (typeof v === 'number' || typeof v === 'boolean') out[k] = String(v);
      else this.fail(fieldPath(path, k), 'must be a string');
    }
    return out;
  }

  /** Warns once for each field of `map` outside `known`; `ignored` are the incumbent's fields this mesh does not act on. */
  unknownFields(map: Mapping, path: string, known: ReadonlySet<string>, ignored: ReadonlySet<string> = new Set()): void {
    for (const key of Object.keys(map)) {
      if (known.has(key)) continue;
      this.warn(fieldPath(path, key), ignored.has(key) ? 'not used by this mesh (ignored)' : 'unknown field (ignored)');
    }
  }

  private checkRange(ms: number, path: string, options: { min?: number; max?: number }): number {
    if (options.min !== undefined && ms < options.min) this.fail(path, `must be at least ${formatMs(options.min)}, not ${formatMs(ms)}`);
    if (options.max !== undefined && ms > options.max) this.fail(path, `must be at most ${formatMs(options.max)}, not ${formatMs(ms)}`);
    return ms;
  }
}

function formatMs(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;
}

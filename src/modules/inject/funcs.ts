import {
  BUILTINS,
  dynamicFromJSON,
  queryEscape,
  FuncError,
  FuncMap,
  GoFunc,
  GoInt,
  GoMap,
  GoNil,
  GoStruct,
  readField,
  SPRIG,
  T,
  formatValue,
  toPlain,
} from './template';
import { goJSON, goYAML } from './go-json';
import { protoToJSON } from './proxy-config';

/**
 * The injector's own template functions (the incumbent's InjectionFuncmap), loaded over the
 * builtins and sprig: annotation lookups, port lists, JSON and YAML of Go values, and the
 * proxy config as proto JSON.
 */

function stringMap(v: unknown): Map<string, unknown> {
  if (v instanceof GoMap) return v.entries;
  if (v === null || v === undefined) return new Map();
  throw new FuncError(`expected a map, got ${formatValue(v)}`);
}

function mergeStringMaps(maps: unknown[]): GoMap {
  const out = new Map<string, unknown>();
  for (const m of maps) for (const [k, v] of stringMap(m)) out.set(k, v);
  return new GoMap(out, T.map(T.string));
}

/** strings.Split on ",", as the incumbent splits port lists. */
function splitPorts(ports: string): string[] {
  return ports.split(',');
}

function excludeInboundPort(port: unknown, excluded: string): string {
  const portStr = formatValue(port === undefined ? null : port).trim();
  if (portStr.length === 0 || portStr === '0') return excluded;
  const out: string[] = [];
  for (const p of splitPorts(excluded)) {
    if (p === portStr) return excluded;
    if (p.trim().length > 0) out.push(p.trim());
  }
  out.push(portStr);
  return out.join(',');
}

/** The container ports of the containers (UDP and SCTP left out), comma separated. */
function containerPorts(containers: unknown, include: (name: string) => boolean): string {
  const parts: string[] = [];
  if (!Array.isArray(containers)) return '';
  for (const c of containers) {
    if (!(c instanceof GoStruct)) continue;
    if (!include(String(readField(c, 'Name')))) continue;
    const ports = readField(c, 'Ports');
    if (!Array.isArray(ports)) continue;
    for (const p of ports) {
      if (!(p instanceof GoStruct)) continue;
      const protocol = readField(p, 'Protocol');
      if (protocol === 'UDP' || protocol === 'SCTP') continue;
      const n = readField(p, 'ContainerPort');
      parts.push(String(n instanceof GoInt ? n.value : n));
    }
  }
  return parts.join(',');
}

function annotation(meta: unknown, name: string, def: unknown): string {
  if (!(meta instanceof GoStruct)) throw new FuncError(`wrong type for value; expected v1.ObjectMeta`);
  const annotations = readField(meta, 'Annotations');
  if (annotations instanceof GoMap && annotations.entries.has(name)) return String(annotations.entries.get(name));
  return formatValue(def === undefined ? null : def);
}

/** The incumbent's indent: every line but the first gets the spaces. */
function indentRest(spaces: number, source: string): string {
  return source
    .split('\n')
    .map((line, i) => (i > 0 ? ' '.repeat(Math.max(0, spaces)) + line : line))
    .join('\n');
}

function appendMultusNetwork(existing: string, network: string): string {
  if (existing === '') return network;
  const i = existing.lastIndexOf(']');
  if (i !== -1) {
    let networks: unknown;
    try {
      networks = JSON.parse(existing);
    } catch {
      return existing;
    }
    if (Array.isArray(networks) && networks.some((n) => n && typeof n === 'object' && (n as Record<string, unknown>).name === network)) return existing;
    return existing.slice(0, i) + `, {"name": "${network}"}` + existing.slice(i);
  }
  if (existing.split(',').some((n) => n.trim() === network)) return existing;
  return `${existing}, ${network}`;
}

/** A protobuf Duration (its JSON text, `45s`) as Go's time.Duration prints it. */
export function formatDuration(value: unknown): string {
  if (value === null || value === undefined || value instanceof GoNil) return '0s';
  const text = value instanceof GoStruct ? '' : String(value);
  const m = /^(-?)(\d+)(?:\.(\d{1,9}))?s$/.exec(text);
  if (!m) throw new FuncError(`not a duration: ${formatValue(value)}`);
  const nanos = BigInt(m[2]) * 1_000_000_000n + BigInt((m[3] ?? '').padEnd(9, '0') || '0');
  return (m[1] ? '-' : '') + goDuration(nanos);
}

function goDuration(nanos: bigint): string {
  if (nanos === 0n) return '0s';
  if (nanos < 1_000_000_000n) {
    const units: [bigint, string][] = [
      [1_000_000n, 'ms'],
      [1_000n, 'µs'],
      [1n, 'ns'],
    ];
    for (const [size, unit] of units) if (nanos >= size) return fraction(nanos, size) + unit;
  }
  const h = nanos / 3_600_000_000_000n;
  const rest = nanos % 3_600_000_000_000n;
  const min = rest / 60_000_000_000n;
  const sec = rest % 60_000_000_000n;
  let out = '';
  if (h > 0n) out += `${h}h`;
  if (h > 0n || min > 0n) out += `${min}m`;
  return out + fraction(sec, 1_000_000_000n) + 's';
}

function fraction(value: bigint, unit: bigint): string {
  const whole = value / unit;
  const frac = value % unit;
  if (frac === 0n) return String(whole);
  const digits = String(unit).length - 1;
  return `${whole}.${String(frac).padStart(digits, '0').replace(/0+$/, '')}`;
}

/** `resource.opentelemetry.io/<key>` pod annotations as OTEL_RESOURCE_ATTRIBUTES (`k=v,...`, sorted). */
function otelResourceAttributes(_mesh: unknown, annotations: unknown): string {
  const prefix = 'resource.opentelemetry.io/';
  const entries = [...stringMap(annotations)].filter(([k]) => k.startsWith(prefix) && k.length > prefix.length);
  return entries
    .map(([k, v]) => [k.slice(prefix.length), String(v)])
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${k}=${queryEscape(v).replace(/\+/g, '%20')}`)
    .join(',');
}

const f = (fn: GoFunc['fn'], params: GoFunc['params'], variadic?: GoFunc['variadic']): GoFunc => ({ fn, params, variadic });

/** The injector's functions; `env` reads the daemon's environment through `lookupEnv`. */
export function injectionFuncs(lookupEnv: (name: string) => string | undefined): Map<string, GoFunc> {
  return new Map<string, GoFunc>([
    ['formatDuration', f(formatDuration, ['any'])],
    ['isset', f((m, key) => stringMap(m).has(key as string), ['map', 'string'])],
    ['excludeInboundPort', f((port, excluded) => excludeInboundPort(port, excluded as string), ['any', 'string'])],
    ['includeInboundPorts', f((cs) => containerPorts(cs, () => true), ['any'])],
    ['applicationPorts', f((cs) => containerPorts(cs, (name) => name !== 'mesh-proxy'), ['any'])],
    ['kubevirtInterfaces', f((s) => s, ['string'])],
    ['excludeInterfaces', f((s) => s, ['string'])],
    ['annotation', f((meta, name, def) => annotation(meta, name as string, def), ['any', 'string', 'any'])],
    ['valueOrDefault', f((v, d) => (v === '' || v === null || v === undefined ? d : v), ['any', 'any'])],
    ['toJSON', f((m) => (m === null || (m instanceof GoMap && m.nil) ? '{}' : goJSON(toPlain(m))), ['map'])],
    ['toJson', f((m) => (m === null || (m instanceof GoMap && m.nil) ? '{}' : goJSON(toPlain(m))), ['map'])],
    ['fromJSON', f((s) => {
      try {
        return dynamicFromJSON(JSON.parse(s as string));
      } catch {
        return '{}';
      }
    }, ['string'])],
    ['structToJSON', f((v) => (v === null ? '{}' : goJSON(toPlain(v))), ['any'])],
    ['protoToJSON', f((v) => protoToJSON(v), ['any'])],
    ['toYaml', f((v) => goYAML(toPlain(v)), ['any'])],
    ['indent', f((n, s) => indentRest(n as number, s as string), ['int', 'string'])],
    ['directory', f((p) => {
      const s = p as string;
      return s.slice(0, s.lastIndexOf('/') + 1);
    }, ['string'])],
    ['contains', f((needle, haystack) => (haystack as string).includes(needle as string), ['string', 'string'])],
    ['toLower', f((s) => (s as string).toLowerCase(), ['string'])],
    ['appendMultusNetwork', f((a, b) => appendMultusNetwork(a as string, b as string), ['string', 'string'])],
    ['env', f((key, def) => lookupEnv(key as string) || (def as string), ['string', 'string'])],
    ['omit', f((m, ...keys) => {
      const src = stringMap(m);
      return new GoMap(new Map([...src].filter(([k]) => !keys.includes(k))), m instanceof GoMap ? m.type : T.map(T.string));
    }, ['map'], 'string')],
    ['omitNil', f((m) => new GoMap(new Map([...stringMap(m)].filter(([, v]) => v !== null && v !== undefined)), m instanceof GoMap ? m.type : T.map(T.any)), ['map'])],
    ['strdict', f((...kv) => {
      const out = new Map<string, unknown>();
      for (let i = 0; i < kv.length; i += 2) out.set(kv[i] as string, i + 1 < kv.length ? kv[i + 1] : '');
      return new GoMap(out, T.map(T.string));
    }, [], 'string')],
    ['toJsonMap', f((...maps) => goJSON(toPlain(mergeStringMaps(maps))), [], 'map')],
    ['mergeMaps', f((...maps) => mergeStringMaps(maps), [], 'map')],
    ['otelResourceAttributes', f((mesh, annotations) => otelResourceAttributes(mesh, annotations), ['any', 'map', 'any', 'any', 'any'])],
  ]);
}

/** Builtins, then sprig, then the injector's functions (later ones win, as Funcs() does). */
export function templateFuncs(lookupEnv: (name: string) => string | undefined): FuncMap {
  return new Map([...BUILTINS, ...SPRIG, ...injectionFuncs(lookupEnv)]);
}

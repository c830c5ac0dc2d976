/**
 * V8's profiles (as the inspector's Profiler and HeapProfiler domains give them) turned into
 * pprof's `perftools.profiles.Profile`, the format `go tool pprof` and other standard tools
 * read. The encoding itself is pprof-format's.
 */
import { Function as PprofFunction, Line, Location, Mapping, Profile, Sample, StringTable, ValueType } from 'pprof-format';

/** A frame as V8 reports it (Runtime.CallFrame): line and column are 0-based. */
export interface V8CallFrame {
  functionName: string;
  scriptId: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}

/** Profiler.Profile: a call tree, and which node was on top at each sample. */
export interface V8CpuProfile {
  nodes: Array<{ id: number; callFrame: V8CallFrame; children?: number[] }>;
  /** Microseconds. */
  startTime: number;
  endTime: number;
  samples?: number[];
  /** Microseconds from the previous sample (the first: from startTime). */
  timeDeltas?: number[];
}

/** HeapProfiler.SamplingHeapProfile: a call tree with the sampled live bytes each node allocated. */
export interface V8HeapNode {
  callFrame: V8CallFrame;
  /** Bytes allocated by this node (scaled up from the samples by V8) and still alive. */
  selfSize: number;
  id: number;
  children: V8HeapNode[];
}
export interface V8HeapProfile {
  head: V8HeapNode;
  /** One per sampled allocation still alive; `size` is the object's own size. */
  samples?: Array<{ size: number; nodeId: number }>;
}

/** V8's synthetic top node; it is no frame of the program. */
const ROOT = '(root)';

/**
 * Functions and locations, each once, with their strings in the profile's string table. One
 * mapping, the program, says every location comes with its function, file and line, so
 * tools do not look for a binary to symbolize them from.
 */
class FrameTable {
  readonly strings = new StringTable();
  readonly functions: PprofFunction[] = [];
  readonly locations: Location[] = [];
  readonly mappings: Mapping[];
  private readonly functionIds = new Map<string, number>();
  private readonly locationIds = new Map<string, number>();

  constructor(program: string) {
    this.mappings = [new Mapping({ id: 1, filename: this.strings.dedup(program), hasFunctions: true, hasFilenames: true, hasLineNumbers: true })];
  }

  locationOf(frame: V8CallFrame): number {
    const key = `${frame.scriptId}:${frame.lineNumber}:${frame.columnNumber}:${frame.functionName}`;
    let id = this.locationIds.get(key);
    if (id === undefined) {
      id = this.locations.length + 1;
      const line = frame.lineNumber >= 0 ? frame.lineNumber + 1 : 0;
      const column = frame.columnNumber >= 0 ? frame.columnNumber + 1 : 0;
      this.locations.push(new Location({ id, mappingId: 1, line: [new Line({ functionId: this.functionOf(frame), line, column })] }));
      this.locationIds.set(key, id);
    }
    return id;
  }

  private functionOf(frame: V8CallFrame): number {
    const name = frame.functionName || '(anonymous)';
    const file = fileName(frame.url);
    const key = `${name}\u0000${file}\u0000${frame.scriptId}`;
    let id = this.functionIds.get(key);
    if (id === undefined) {
      id = this.functions.length + 1;
      const nameId = this.strings.dedup(name);
      this.functions.push(new PprofFunction({ id, name: nameId, systemName: nameId, filename: this.strings.dedup(file) }));
      this.functionIds.set(key, id);
    }
    return id;
  }
}

/** A script's path as tools show it: `file:///a/b.js` → `/a/b.js`; node's built-ins keep their `node:` name. */
function fileName(url: string): string {
  if (!url.startsWith('file://')) return url;
  try {
    return decodeURIComponent(new URL(url).pathname);
  } catch {
    return url;
  }
}

function valueType(strings: StringTable, type: string, unit: string): ValueType {
  return new ValueType({ type: strings.dedup(type), unit: strings.dedup(unit) });
}

/**
 * A CPU profile: one pprof sample per call stack V8 saw on top, with how many ticks landed
 * there and the CPU time they stand for (the measured time between ticks), as
 * `samples/count` and `cpu/nanoseconds` like the Go runtime's CPU profiles.
 */
export function cpuProfileToPprof(v8: V8CpuProfile, intervalMicros: number, program: string): Profile {
  const frames = new FrameTable(program);
  const byId = new Map(v8.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const node of v8.nodes) for (const child of node.children ?? []) parent.set(child, node.id);

  const ticks = new Map<number, { count: number; micros: number }>();
  const samples = v8.samples ?? [];
  const deltas = v8.timeDeltas ?? [];
  for (let i = 0; i < samples.length; i++) {
    // A tick stands for the time until the next one; the last for one interval.
    const micros = i + 1 < deltas.length ? Math.max(0, deltas[i + 1]) : intervalMicros;
    const t = ticks.get(samples[i]) ?? { count: 0, micros: 0 };
    t.count++;
    t.micros += micros;
    ticks.set(samples[i], t);
  }

  const stackOf = (leaf: number): number[] => {
    const stack: number[] = [];
    for (let id: number | undefined = leaf; id !== undefined; id = parent.get(id)) {
      const node = byId.get(id);
      if (!node || node.callFrame.functionName === ROOT) continue;
      stack.push(frames.locationOf(node.callFrame));
    }
    return stack;
  };

  const pprofSamples: Sample[] = [];
  for (const [nodeId, t] of ticks) {
    const stack = stackOf(nodeId);
    if (stack.length === 0) continue;
    pprofSamples.push(new Sample({ locationId: stack, value: [t.count, Math.round(t.micros * 1000)] }));
  }

  const strings = frames.strings;
  return new Profile({
    sampleType: [valueType(strings, 'samples', 'count'), valueType(strings, 'cpu', 'nanoseconds')],
    sample: pprofSamples,
    mapping: frames.mappings,
    location: frames.locations,
    function: frames.functions,
    stringTable: strings,
    timeNanos: BigInt(Date.now()) * 1_000_000n - BigInt(Math.round((v8.endTime - v8.startTime) * 1000)),
    durationNanos: Math.max(0, Math.round((v8.endTime - v8.startTime) * 1000)),
    periodType: valueType(strings, 'cpu', 'nanoseconds'),
    period: Math.round(intervalMicros * 1000),
  });
}

/**
 * A heap profile of what is alive now, from V8's allocation sampling: per allocating call
 * stack, the estimated number of live objects and their bytes, as `inuse_objects/count` and
 * `inuse_space/bytes` (the sample types of the Go runtime's heap profile that mean the same).
 */
export function heapProfileToPprof(v8: V8HeapProfile, samplingIntervalBytes: number, program: string): Profile {
  const frames = new FrameTable(program);
  // V8 scales selfSize up to stand for all allocations, sampled or not; the object count is
  // scaled the same way, from the node's sampled objects.
  const sampled = new Map<number, { count: number; bytes: number }>();
  for (const s of v8.samples ?? []) {
    const entry = sampled.get(s.nodeId) ?? { count: 0, bytes: 0 };
    entry.count++;
    entry.bytes += s.size;
    sampled.set(s.nodeId, entry);
  }

  const pprofSamples: Sample[] = [];
  const walk = (node: V8HeapNode, parentStack: number[]): void => {
    const stack = node.callFrame.functionName === ROOT && parentStack.length === 0 ? parentStack : [frames.locationOf(node.callFrame), ...parentStack];
    if (node.selfSize > 0 && stack.length > 0) {
      const s = sampled.get(node.id);
      const objects = s && s.bytes > 0 ? Math.max(1, Math.round((s.count * node.selfSize) / s.bytes)) : Math.max(1, Math.round(node.selfSize / samplingIntervalBytes));
      pprofSamples.push(new Sample({ locationId: stack, value: [objects, Math.round(node.selfSize)] }));
    }
    for (const child of node.children) walk(child, stack);
  };
  walk(v8.head, []);

  const strings = frames.strings;
  const inuseSpace = strings.dedup('inuse_space');
  return new Profile({
    sampleType: [valueType(strings, 'inuse_objects', 'count'), new ValueType({ type: inuseSpace, unit: strings.dedup('bytes') })],
    sample: pprofSamples,
    mapping: frames.mappings,
    location: frames.locations,
    function: frames.functions,
    stringTable: strings,
    timeNanos: BigInt(Date.now()) * 1_000_000n,
    periodType: valueType(strings, 'space', 'bytes'),
    period: samplingIntervalBytes,
    defaultSampleType: inuseSpace,
  });
}

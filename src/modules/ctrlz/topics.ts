/**
 * What the ControlZ pages show about this process, as data: each topic is served as JSON
 * at `/<prefix>j/` and as a page at `/<prefix>z/`, like the incumbent's topics.
 */
import * as os from 'node:os';
import * as v8 from 'node:v8';
import type { BuildInfo } from '../build-info';
import type { Environment } from '../settings/environment';
import { escapeHtml, formatBytes, keyValueTable } from './html';

export interface Topic {
  title: string;
  /** `/<prefix>z/` is the page, `/<prefix>j/` the JSON. */
  prefix: string;
  /** What the JSON address serves. */
  data(): Promise<unknown>;
  /** The page body (inside the layout), from fresh data. */
  body(): Promise<string>;
}

/** A topic from what it shows (`data`) and how its page shows that (`html`). */
export function topic<T>(title: string, prefix: string, data: () => T | Promise<T>, html: (data: T) => string): Topic {
  return { title, prefix, data: async () => data(), body: async () => html(await data()) };
}

/** The program and its arguments (node's own path left out: it is not the daemon's command line). */
export function commandLine(): string[] {
  return process.argv.slice(1);
}

export interface HomeInfo {
  processName: string;
  pid: number;
  hostname: string;
  currentTime: string;
  uptimeSeconds: number;
  heapUsed: number;
  rss: number;
}

export function homeInfo(): HomeInfo {
  const mem = process.memoryUsage();
  return {
    processName: commandLine()[0] ?? process.title,
    pid: process.pid,
    hostname: os.hostname(),
    currentTime: new Date().toISOString(),
    uptimeSeconds: Math.round(process.uptime()),
    heapUsed: mem.heapUsed,
    rss: mem.rss,
  };
}

export function homeHtml(info: HomeInfo, topics: readonly Topic[], profiling: boolean): string {
  const links = topics.map((t) => `<li><a href="/${t.prefix}z/">${escapeHtml(t.title)}</a></li>`).join('\n');
  return `${keyValueTable([
    ['Process', info.processName],
    ['PID', info.pid],
    ['Host name', info.hostname],
    ['Current time', info.currentTime],
    ['Up for', `${info.uptimeSeconds} s`],
    ['Heap used', formatBytes(info.heapUsed)],
    ['Resident set size', formatBytes(info.rss)],
  ])}
<h2>Topics</h2>
<ul>
${links}
<li><a href="/debug/pprof/">Profiling</a>${profiling ? '' : ' <span class="note">(off: start the daemon with --profile)</span>'}</li>
</ul>
<p class="note">Each topic is also served as JSON: replace the trailing <code>z/</code> of its address by <code>j/</code> (e.g. <code>/scopej/</code>).</p>`;
}

export const memTopic = topic(
  'Memory Usage',
  'mem',
  () => ({ process: process.memoryUsage(), heap: v8.getHeapStatistics(), heapSpaces: v8.getHeapSpaceStatistics() }),
  (d) => {
    const bytes = (entries: Array<[string, number]>) => keyValueTable(entries.map(([k, v]) => [k, formatBytes(v)] as const));
    const spaces = d.heapSpaces
      .map((s) => `<tr><td>${escapeHtml(s.space_name)}</td><td class="num">${escapeHtml(formatBytes(s.space_size))}</td><td class="num">${escapeHtml(formatBytes(s.space_used_size))}</td><td class="num">${escapeHtml(formatBytes(s.space_available_size))}</td></tr>`)
      .join('\n');
    return `<h2>Process</h2>
${bytes(Object.entries(d.process))}
<h2>V8 heap</h2>
${keyValueTable(Object.entries(d.heap).map(([k, v]) => [k, k.startsWith('number_of') || k === 'does_zap_garbage' ? v : formatBytes(v)] as const))}
<h2>Heap spaces</h2>
<table><thead><tr><th>Space</th><th>Size</th><th>Used</th><th>Available</th></tr></thead>
<tbody>
${spaces}
</tbody></table>`;
  },
);

export function envTopic(env: Environment): Topic {
  return topic(
    'Environment Variables',
    'env',
    () =>
      Object.entries(env)
        .filter((e): e is [string, string] => e[1] !== undefined)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([name, value]) => ({ name, value })),
    (d) => keyValueTable(d.map((e) => [e.name, e.value] as const), ['Variable', 'Value']),
  );
}

export const procTopic = topic(
  'Process Info',
  'proc',
  () => ({
    pid: process.pid,
    ppid: process.ppid,
    uid: process.getuid?.(),
    gid: process.getgid?.(),
    euid: process.geteuid?.(),
    egid: process.getegid?.(),
    groups: process.getgroups?.() ?? [],
    wd: process.cwd(),
    hostname: os.hostname(),
    tempdir: os.tmpdir(),
    platform: process.platform,
    arch: process.arch,
    node: process.version,
    uptimeSeconds: Math.round(process.uptime()),
    activeResources: process.getActiveResourcesInfo(),
  }),
  (d: Record<string, unknown>) =>
    keyValueTable(
      Object.entries(d).map(([k, v]) => {
        if (k === 'activeResources') return [k, summarizeResources(v as string[])] as const;
        return [k, Array.isArray(v) ? v.join(', ') : v] as const;
      }),
    ),
);

/** `TCPServerWrap ×4, Timeout ×12`: what keeps the event loop busy. */
function summarizeResources(resources: string[]): string {
  const counts = new Map<string, number>();
  for (const r of resources) counts.set(r, (counts.get(r) ?? 0) + 1);
  return [...counts].map(([r, n]) => `${r} ×${n}`).join(', ');
}

export const argsTopic = topic(
  'Command-Line Arguments',
  'args',
  () => commandLine(),
  (d) => `<table><thead><tr><th>#</th><th>Argument</th></tr></thead>
<tbody>
${d.map((a, i) => `<tr><td class="num">${i}</td><td><code>${escapeHtml(a)}</code></td></tr>`).join('\n')}
</tbody></table>`,
);

export function versionTopic(build: BuildInfo): Topic {
  return topic('Version Info', 'version', () => ({ ...build }), (d) => keyValueTable(Object.entries(d)));
}

/** Anything that lists its metrics as prom-client's JSON (the daemon's registry). */
export interface MetricsJsonSource {
  getMetricsAsJSON(): Promise<Array<{ name: string; help: string; type: unknown; values: Array<{ value: number; labels: object; metricName?: string }> }>>;
}

export function metricsTopic(registry: MetricsJsonSource): Topic {
  return topic(
    'Metrics',
    'metric',
    () => registry.getMetricsAsJSON(),
    (families) => {
      const rows = families
        .flatMap((f) =>
          f.values.map((v) => {
            const labels = Object.entries(v.labels)
              .map(([k, l]) => `${k}="${l}"`)
              .join(', ');
            return `<tr><td><code>${escapeHtml(v.metricName ?? f.name)}</code></td><td><code>${escapeHtml(labels)}</code></td><td class="num">${escapeHtml(v.value)}</td></tr>`;
          }),
        )
        .join('\n');
      return `<p class="note">The daemon's metrics as the monitoring port's <code>/metrics</code> serves them to scrapers.</p>
<table><thead><tr><th>Metric</th><th>Labels</th><th>Value</th></tr></thead>
<tbody>
${rows}
</tbody></table>`;
    },
  );
}

import { gzipSync } from 'node:zlib';
import type { Profile } from 'pprof-format';
import { escapeHtml } from '../html';
import { commandLine } from '../topics';
import { InProcessProfiler, ProfileAbortedError, ProfilerBusyError } from './profiler';

/**
 * The profiling paths under `/debug/pprof/`, in the shape of Go's net/http/pprof so the same
 * tools and habits work (`go tool pprof http://host:port/debug/pprof/heap`). Independent of
 * the server: the ControlZ server and the daemon's HTTP debug server both answer through it.
 */

export const PPROF_PREFIX = '/debug/pprof';
export const DEFAULT_CPU_SECONDS = 30;
/** Longest CPU profile one request may ask for. */
export const MAX_CPU_SECONDS = 300;

export interface PprofResponse {
  status: number;
  contentType: string;
  body: Buffer | string;
  headers?: Record<string, string>;
}

const PROFILES: ReadonlyArray<{ name: string; description: string }> = [
  { name: 'profile', description: `CPU profile; ?seconds=N samples for N seconds (default ${DEFAULT_CPU_SECONDS}, at most ${MAX_CPU_SECONDS})` },
  { name: 'heap', description: 'live heap, sampled from the allocations since the daemon started; ?gc=1 collects garbage first' },
  { name: 'cmdline', description: 'the command line of the daemon, arguments separated by NUL bytes' },
];

export const PROFILING_OFF = 'profiling is off: start the daemon with --profile (pilot-discovery discovery --profile) to serve /debug/pprof/\n';

/** True for `/debug/pprof` and the paths below it. */
export function isPprofPath(path: string): boolean {
  return path === PPROF_PREFIX || path.startsWith(PPROF_PREFIX + '/');
}

/**
 * Answers one `/debug/pprof/...` request. `profiler` is undefined when profiling is off
 * (every path is then a 404 saying how to turn it on); `signal` aborts a CPU profile whose
 * client went away.
 */
export async function pprofResponse(
  path: string,
  query: URLSearchParams,
  profiler: InProcessProfiler | undefined,
  signal?: AbortSignal,
): Promise<PprofResponse> {
  if (!profiler) return text(404, PROFILING_OFF);
  const name = path.slice(PPROF_PREFIX.length).replace(/^\/+|\/+$/g, '');
  switch (name) {
    case '':
      return { status: 200, contentType: 'text/html; charset=utf-8', body: indexPage() };
    case 'cmdline':
      return text(200, commandLine().join('\u0000'));
    case 'profile': {
      const seconds = parseSeconds(query.get('seconds'));
      if (typeof seconds === 'string') return text(400, seconds);
      return profileResponse('profile', () => profiler.cpuProfile(seconds, signal));
    }
    case 'heap': {
      const gc = query.get('gc');
      if (gc !== null && gc !== '0' && gc !== '1') return text(400, `invalid gc=${JSON.stringify(gc)}: expected 0 or 1\n`);
      return profileResponse('heap', () => profiler.heapProfile({ gc: gc === '1' }));
    }
    default:
      return text(404, `unknown profile ${JSON.stringify(name)}; available: ${PROFILES.map((p) => p.name).join(', ')}\n`);
  }
}

/** Whole seconds from 1 to MAX_CPU_SECONDS; a string is the 400 message. */
function parseSeconds(value: string | null): number | string {
  if (value === null || value === '') return DEFAULT_CPU_SECONDS;
  if (!/^\d{1,6}$/.test(value) || Number(value) < 1 || Number(value) > MAX_CPU_SECONDS) {
    return `invalid seconds=${JSON.stringify(value.slice(0, 40))}: expected a whole number of seconds from 1 to ${MAX_CPU_SECONDS}\n`;
  }
  return Number(value);
}

async function profileResponse(filename: string, take: () => Promise<Profile>): Promise<PprofResponse> {
  let profile: Profile;
  try {
    profile = await take();
  } catch (err) {
    if (err instanceof ProfilerBusyError) return text(409, `${err.message}\n`);
    if (err instanceof ProfileAbortedError) return text(503, `${err.message}\n`);
    throw err;
  }
  return {
    status: 200,
    contentType: 'application/octet-stream',
    // pprof files are gzip-compressed protobuf, as the Go runtime writes them.
    body: gzipSync(profile.encode()),
    headers: { 'Content-Disposition': `attachment; filename="${filename}"`, 'X-Content-Type-Options': 'nosniff' },
  };
}

function text(status: number, body: string): PprofResponse {
  return { status, contentType: 'text/plain; charset=utf-8', body };
}

function indexPage(): string {
  const rows = PROFILES.map((p) => `<tr><td><a href="${PPROF_PREFIX}/${p.name}">${p.name}</a></td><td>${escapeHtml(p.description)}</td></tr>`).join('\n');
  return `<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>/debug/pprof/</title></head>
<body>
<h1>/debug/pprof/</h1>
<p>Profiles of this daemon, in the pprof format (gzip-compressed protobuf): open them with <code>go tool pprof</code> or another pprof viewer.</p>
<table>
${rows}
</table>
</body></html>
`;
}

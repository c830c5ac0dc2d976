/**
 * Envoy's command line, as the incumbent starts it: the bootstrap file, drain time and
 * strategy, address family, log format and levels, and `--concurrency` when one is chosen.
 */
import { Duration } from '../../settings/duration';
import { BootstrapError } from './errors';
import { IpFamily } from './envoy-bootstrap';
import { ENVOY_LOG_LEVELS, EnvoyLogLevel } from '../../envoy/log-levels';

// `--proxyLogLevel` takes Envoy's levels (`warn` is read as `warning`).
export { ENVOY_LOG_LEVELS, EnvoyLogLevel };

export interface ProxyLogLevels {
  /** `-l`: the level of every logger not listed in `components`. */
  level: EnvoyLogLevel;
  /** `--component-log-level`: per-logger levels, in the order given. */
  components: [name: string, level: EnvoyLogLevel][];
}

function envoyLevel(text: string, flag: string, whole: string): EnvoyLogLevel {
  const level = text.trim().toLowerCase();
  if (level === 'warn') return 'warning';
  if ((ENVOY_LOG_LEVELS as readonly string[]).includes(level)) return level as EnvoyLogLevel;
  throw new BootstrapError(`${flag} ${JSON.stringify(whole)}: unknown log level ${JSON.stringify(text)}; use one of ${ENVOY_LOG_LEVELS.join(', ')}`);
}

/**
 * Reads `--proxyLogLevel` (`info` or `info,misc:error,upstream:debug`) and the deprecated
 * `--proxyComponentLogLevel` (`misc:error,upstream:debug`, applied after the former's).
 * An empty level means `warning`, the flag's default.
 */
export function parseProxyLogLevel(proxyLogLevel: string, proxyComponentLogLevel = ''): ProxyLogLevels {
  const out: ProxyLogLevels = { level: 'warning', components: [] };
  const read = (value: string, flag: string, componentsOnly: boolean) => {
    let levelSeen = false;
    for (const part of value.split(',').map((p) => p.trim())) {
      if (part === '') continue;
      const colon = part.indexOf(':');
      if (colon < 0) {
        if (componentsOnly) throw new BootstrapError(`${flag} ${JSON.stringify(value)}: ${JSON.stringify(part)} is not <component>:<level>`);
        if (levelSeen) throw new BootstrapError(`${flag} ${JSON.stringify(value)}: more than one overall level (${out.level}, ${part}); list components as <component>:<level>`);
        out.level = envoyLevel(part, flag, value);
        levelSeen = true;
        continue;
      }
      const name = part.slice(0, colon).trim();
      if (!/^[a-z][a-z0-9_]*$/.test(name)) throw new BootstrapError(`${flag} ${JSON.stringify(value)}: ${JSON.stringify(name)} is not an Envoy logger name (lower case letters, digits and _)`);
      const level = envoyLevel(part.slice(colon + 1), flag, value);
      const existing = out.components.findIndex(([n]) => n === name);
      if (existing >= 0) out.components[existing] = [name, level];
      else out.components.push([name, level]);
    }
  };
  read(proxyLogLevel, '--proxyLogLevel', false);
  read(proxyComponentLogLevel, '--proxyComponentLogLevel', true);
  return out;
}

export interface EnvoyArgsOptions {
  /** The bootstrap file (`writeEnvoyBootstrap`'s result). */
  bootstrapFile: string;
  /** ProxyConfig `drainDuration` (Go duration, e.g. `45s`). */
  drainDuration: string;
  ipFamily: IpFamily;
  /** `--proxyLogLevel`. */
  proxyLogLevel: string;
  /** `--proxyComponentLogLevel` (deprecated). */
  proxyComponentLogLevel?: string;
  /** `--concurrency`: worker threads; 0 = decided by `cpuLimit`, else by Envoy (one per hardware thread). */
  concurrency: number;
  /** MESH_CPU_LIMIT: the CPU limit rounded up; used when `concurrency` is 0. */
  cpuLimit?: number;
  /** `--log_as_json`: Envoy logs JSON lines as the agent does. */
  logAsJson?: boolean;
  /** PROXY_SKIP_DEPRECATED_LOGS. */
  skipDeprecatedLogs?: boolean;
}

const TEXT_LOG_FORMAT = '%Y-%m-%dT%T.%fZ\t%l\tenvoy %n %g:%#\t%v\tthread=%t';
const JSON_LOG_FORMAT = '{"level":"%l","time":"%Y-%m-%dT%T.%fZ","scope":"envoy %n","msg":"%j","caller":"%g:%#","thread":%t}';

/** Envoy's argv (without the binary). Throws BootstrapError naming the flag of a bad value. */
export function envoyArgs(options: EnvoyArgsOptions): string[] {
  let drainSeconds: number;
  try {
    drainSeconds = Number(Duration.parse(options.drainDuration).nanos / 1_000_000_000n);
  } catch {
    throw new BootstrapError(`ProxyConfig drainDuration ${JSON.stringify(options.drainDuration)}: not a duration (e.g. 45s)`);
  }
  if (!Number.isInteger(options.concurrency) || options.concurrency < 0) {
    throw new BootstrapError(`--concurrency ${options.concurrency}: must be 0 (chosen for you) or a positive number of worker threads`);
  }
  const levels = parseProxyLogLevel(options.proxyLogLevel, options.proxyComponentLogLevel);
  const args = [
    '-c', options.bootstrapFile,
    '--drain-time-s', String(drainSeconds),
    '--drain-strategy', 'immediate',
    '--local-address-ip-version', options.ipFamily,
    '--file-flush-interval-msec', '1000',
    // The agent restarts Envoy itself; hot restart would need shared memory between the two.
    '--disable-hot-restart',
    '--log-format', options.logAsJson ? JSON_LOG_FORMAT : TEXT_LOG_FORMAT,
    '-l', levels.level,
  ];
  if (levels.components.length > 0) args.push('--component-log-level', levels.components.map(([n, l]) => `${n}:${l}`).join(','));
  if (options.skipDeprecatedLogs) args.push('--skip-deprecated-logs');
  const concurrency = options.concurrency > 0 ? options.concurrency : Math.max(0, Math.ceil(options.cpuLimit ?? 0));
  if (concurrency > 0) args.push('--concurrency', String(concurrency));
  return args;
}

/**
 * The built-in proxy's version in Envoy's `/server_info` form
 * (`<revision>/<version>/<status>/<build type>/<TLS library>`).
 */
export function builtInProxyVersion(build: BuildInfo): string {
  return `${build.revision}/${build.version}/${build.status}/RELEASE/OpenSSL-${process.versions.openssl}`;
}

/**
 * The built-in proxy's loggers at the levels `--proxyLogLevel` (and the deprecated
 * `--proxyComponentLogLevel`) give Envoy, writing to the agent's stderr as Envoy's output does.
 */
import type { BuildInfo } from '../build-info';
import type { ScopedLogger } from '../logging';
import { ProxyLoggers, stderrProxyLogSink } from '../proxy/logging/proxy-loggers';
import { parseProxyLogLevel } from './bootstrap';

export function builtInProxyLoggers(proxyLogLevel: string, proxyComponentLogLevel: string | undefined, log: ScopedLogger): ProxyLoggers {
  const levels = parseProxyLogLevel(proxyLogLevel, proxyComponentLogLevel);
  const loggers = new ProxyLoggers(stderrProxyLogSink, levels.level);
  const known = levels.components.filter(([name]) => loggers.has(name));
  // The same flags serve Envoy, which has many more loggers: those the built-in proxy lacks are skipped.
  const unknown = levels.components.filter(([name]) => !loggers.has(name)).map(([name]) => name);
  if (unknown.length > 0) {
    log.warn(`the built-in proxy has no logger ${unknown.join(', ')} (its loggers: ${loggers.levels().map((l) => l.name).join(', ')}); those levels are ignored`);
  }
  loggers.set(new Map(known));
  return loggers;
}

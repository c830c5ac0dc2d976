/**
 * Envoy's log levels (spdlog's names as Envoy spells them: `warning`, not `warn`), shared by the
 * agent's Envoy command line, the built-in proxy's loggers and meshctl's `proxy-config log`.
 */
export const ENVOY_LOG_LEVELS = ['trace', 'debug', 'info', 'warning', 'error', 'critical', 'off'] as const;
export type EnvoyLogLevel = (typeof ENVOY_LOG_LEVELS)[number];

export function isEnvoyLogLevel(text: string): text is EnvoyLogLevel {
  return (ENVOY_LOG_LEVELS as readonly string[]).includes(text);
}

/** Higher is more severe; `off` is above every level, so nothing passes it. */
export function envoyLevelRank(level: EnvoyLogLevel): number {
  return ENVOY_LOG_LEVELS.indexOf(level);
}

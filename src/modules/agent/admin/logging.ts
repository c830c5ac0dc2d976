/**
 * Envoy's admin `/logging` for the built-in proxy's loggers, answering as Envoy does: the
 * "active loggers" list, and with one query parameter a change first (`level=<l>` sets every
 * logger, `<name>=<l>` one, `paths=<name>:<l>,...` several, all or nothing); a bad change is a
 * 400 naming the fault, with the usage lines, and changes nothing.
 *
 * Envoy takes only POST here, as the path changes state; a GET without parameters is answered
 * too (it only reads), so a browser on the admin page can look.
 */
import { ENVOY_LOG_LEVELS, EnvoyLogLevel, isEnvoyLogLevel } from '../../envoy/log-levels';
import { ProxyLoggers } from '../../proxy/logging/proxy-loggers';
import { AdminHandler, AdminRequest, AdminResponse, text } from './handlers';

class BadLoggingRequest extends Error {}

export function loggingHandler(loggers: ProxyLoggers): AdminHandler {
  return {
    path: '/logging',
    help: 'query/change logging levels',
    mutates: true,
    params: [
      { id: 'paths', help: 'Change multiple logging levels by setting to <logger_name1>:<desired_level1>,<logger_name2>:<desired_level2>.' },
      { id: 'level', help: "desired logging level, this will change all loggers's level", choices: ['', ...ENVOY_LOG_LEVELS] },
    ],
    handle: (request) => handleLogging(loggers, request),
  };
}

/** The admin's own log lines about level changes go to its `admin` logger, as Envoy's do. */
function handleLogging(loggers: ProxyLoggers, request: AdminRequest): AdminResponse {
  const params = [...new Set(request.url.searchParams.keys())];
  let status = 200;
  let body = '';
  if (params.length > 0) {
    try {
      change(loggers, params, request.url.searchParams);
    } catch (err) {
      if (!(err instanceof BadLoggingRequest)) throw err;
      status = 400;
      body += `error: ${err.message}\n\n`;
      body += 'usage: /logging?<name>=<level> (change single level)\n';
      body += 'usage: /logging?paths=name1:level1,name2:level2,... (change multiple levels)\n';
      body += 'usage: /logging?level=<level> (change all levels)\n';
      body += `levels: ${ENVOY_LOG_LEVELS.map((l) => `${l} `).join('')}\n`;
    }
  }
  body += 'active loggers:\n';
  for (const { name, level } of loggers.levels()) body += `  ${name}: ${level}\n`;
  body += '\n';
  return text(status, body);
}

function change(loggers: ProxyLoggers, params: string[], query: URLSearchParams): void {
  if (params.length !== 1) throw new BadLoggingRequest('invalid number of parameters');
  const key = params[0];
  const value = query.get(key) ?? '';
  const admin = loggers.get('admin');
  if (key === 'level') {
    const level = parseLevel(value);
    admin.info(`change all log levels: level='${level}'`);
    loggers.setAll(level);
    return;
  }
  const changes = new Map<string, EnvoyLogLevel>();
  if (key === 'paths') {
    for (const pair of value.split(',').filter((p) => p.trim() !== '')) {
      const colon = pair.indexOf(':');
      const name = colon < 0 ? pair.trim() : pair.slice(0, colon).trim();
      const level = colon < 0 ? '' : pair.slice(colon + 1).trim();
      if (name === '' || level === '') throw new BadLoggingRequest('empty logger name or empty logger level');
      changes.set(name, parseLevel(level));
    }
  } else {
    changes.set(key, parseLevel(value));
  }
  if ([...changes.keys()].some((name) => !loggers.has(name))) throw new BadLoggingRequest('unknown logger name');
  for (const [name, level] of changes) admin.info(`change log level: name='${name}' level='${level}'`);
  loggers.set(changes);
}

function parseLevel(text: string): EnvoyLogLevel {
  if (!isEnvoyLogLevel(text)) throw new BadLoggingRequest('unknown logger level');
  return text;
}

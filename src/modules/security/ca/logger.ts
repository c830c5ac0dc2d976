/** What the CA logs through; the project's ScopedLogger fits. */
export interface CaLogger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

export const SILENT_LOGGER: CaLogger = { debug() {}, info() {}, warn() {}, error() {} };

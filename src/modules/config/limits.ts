import type { Settings } from '../settings';
import { UserError } from '../shared/user-error';

/**
 * What one config file may cost to read. Each limit is checked before the work it guards
 * (size before reading, nesting and document count on the syntax tree before building
 * values, alias expansion before it happens), so a hostile file costs bounded time and memory.
 */
export interface ConfigFileLimits {
  /** Bytes (PILOT_CONFIG_FILE_MAX_BYTES). */
  maxBytes: number;
  /** YAML alias references (`*name`) per file: a legitimate file needs a handful. */
  maxAliases: number;
  /** Values aliases may add to a file once expanded: the billion-laughs guard. */
  maxAliasExpansion: number;
  /** Levels of nested mappings and sequences (the deepest resource needs about ten). */
  maxDepth: number;
  /** YAML documents per file. */
  maxDocuments: number;
}

export const CONFIG_FILE_MAX_BYTES_SETTING = 'PILOT_CONFIG_FILE_MAX_BYTES';

/** Above this a file could not even be decoded (V8's longest string is about 512 MiB). */
const LARGEST_MAX_BYTES = 256 * 1024 * 1024;

export const DEFAULT_CONFIG_FILE_LIMITS: Readonly<ConfigFileLimits> = {
  maxBytes: 2 * 1024 * 1024,
  maxAliases: 100,
  maxAliasExpansion: 100_000,
  maxDepth: 100,
  maxDocuments: 10_000,
};

/** A setting value outside its range; the message is the one line the user sees. */
export class ConfigLimitSettingError extends UserError {}

/** The limits with the size from PILOT_CONFIG_FILE_MAX_BYTES; throws ConfigLimitSettingError when it is out of range. */
export function configFileLimits(settings: Settings): ConfigFileLimits {
  const maxBytes = settings.int(CONFIG_FILE_MAX_BYTES_SETTING);
  if (maxBytes < 1 || maxBytes > LARGEST_MAX_BYTES) {
    throw new ConfigLimitSettingError(`invalid value ${maxBytes} for setting ${CONFIG_FILE_MAX_BYTES_SETTING}: expected a size in bytes from 1 to ${LARGEST_MAX_BYTES}`);
  }
  return { ...DEFAULT_CONFIG_FILE_LIMITS, maxBytes };
}

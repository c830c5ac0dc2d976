/**
 * Who fetches key sets named by `jwksUri` (PILOT_JWT_ENABLE_REMOTE_JWKS, spec/01):
 * - `meshd`  (`meshd`, `false`): the daemon fetches them and inlines the keys;
 * - `hybrid` (`hybrid`, `true`): the proxy fetches them when the key-set server is a service
 *   of the mesh, the daemon otherwise;
 * - `proxy`: the proxy always fetches them.
 */
import { UserError } from '../../shared/user-error';
export type JwksFetchMode = 'meshd' | 'hybrid' | 'proxy';

const MODES = new Map<string, JwksFetchMode>([
  ['meshd', 'meshd'],
  ['false', 'meshd'],
  ['hybrid', 'hybrid'],
  ['true', 'hybrid'],
  ['proxy', 'proxy'],
]);

/** Values PILOT_JWT_ENABLE_REMOTE_JWKS accepts, for error messages. */
export const JWKS_FETCH_MODE_VALUES: readonly string[] = [...MODES.keys()];

/** A request-authentication setting with a value the daemon cannot use; the message names it. */
export class AuthnSettingError extends UserError {}

/** Parses a setting value (any letter case, as booleans are); throws naming the setting and the values it accepts. */
export function parseJwksFetchMode(value: string, setting = 'PILOT_JWT_ENABLE_REMOTE_JWKS'): JwksFetchMode {
  const mode = MODES.get(value.trim().toLowerCase());
  if (!mode) throw new AuthnSettingError(`invalid value ${JSON.stringify(value)} for setting ${setting}: expected one of ${JWKS_FETCH_MODE_VALUES.join(', ')}`);
  return mode;
}

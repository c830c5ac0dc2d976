import { XdsConnection } from './connection';

/**
 * Told when a proxy's ADS stream is admitted (authenticated, counted) and when it closes; for
 * what follows a proxy's presence, such as WorkloadGroup auto-registration. A contribution
 * point, so a plugin can follow connections too. Listeners must not throw or block: the
 * server logs a listener's error and goes on.
 */
export const XdsConnectionListener = Symbol.for('mesh.XdsConnectionListener');
export interface XdsConnectionListener {
  connected(conn: XdsConnection): void;
  disconnected(conn: XdsConnection): void;
}

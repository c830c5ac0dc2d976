/** The daemon (`pilot-discovery discovery`) and its composition. */
export { Daemon, DaemonToken } from './daemon';
export { DaemonFlags, DaemonFlagsToken, DaemonStartError } from './daemon-flags';
export { discoveryModule } from './module';

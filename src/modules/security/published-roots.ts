/**
 * Where the daemon publishes the mesh roots and the agent reads them (both relative to their
 * working directory): the incumbent's root-cert config map, as it is mounted in a workload.
 */
export const PUBLISHED_ROOTS_PATH = './var/run/secrets/mesh/root-cert.pem';

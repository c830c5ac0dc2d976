import { RunningProgram, startProgram } from './program';

export interface RunningAgent extends RunningProgram {
  statusPort: number;
  adminPort: number;
}

export interface AgentSpec {
  /** The daemon's plaintext xDS port. */
  grpcPort: number;
  instanceIp: string;
  namespace: string;
  labels: Record<string, string>;
  env?: Record<string, string>;
}

/**
 * Starts `pilot-agent proxy` for a workload without traffic capture, running the built-in
 * proxy (no Envoy binary at binaryPath), with status and admin ports picked by the system.
 */
export async function startAgent(spec: AgentSpec): Promise<RunningAgent> {
  const proxyConfig = {
    discoveryAddress: `127.0.0.1:${spec.grpcPort}`,
    controlPlaneAuthPolicy: 'NONE',
    interceptionMode: 'NONE',
    binaryPath: '/nonexistent/envoy',
    proxyAdminPort: 0,
  };
  const program = startProgram('pilot-agent', ['proxy', '--meshConfig', '/nonexistent/mesh'], {
    INSTANCE_IP: spec.instanceIp,
    POD_NAME: 'app',
    POD_NAMESPACE: spec.namespace,
    MESH_METAJSON_LABELS: JSON.stringify(spec.labels),
    PROXY_CONFIG: JSON.stringify(proxyConfig),
    PROXY_STATUS_PORT: '0',
    MINIMUM_DRAIN_DURATION: '0s',
    ...spec.env,
  });
  const statusPort = Number(/:(\d+) /.exec(await program.waitForLog(/status server listening on :\d+ /))![1]);
  const adminPort = Number(/:(\d+)$/.exec(await program.waitForLog(/proxy admin listening on 127\.0\.0\.1:\d+/))![1]);
  return { ...program, statusPort, adminPort };
}

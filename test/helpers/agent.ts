import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { RunningProgram, startProgram } from './program';

export interface RunningAgent extends RunningProgram {
  statusPort: number;
  adminPort: number;
  /** The agent's working directory (its sockets, and OUTPUT_CERTS at `<workDir>/certs` for secure agents). */
  workDir: string;
}

export interface AgentSpec {
  /** The daemon's plaintext xDS port. */
  grpcPort: number;
  instanceIp: string;
  namespace: string;
  labels: Record<string, string>;
  env?: Record<string, string>;
  /** More `pilot-agent proxy` flags (e.g. `--proxyLogLevel`). */
  args?: string[];
  /** Mutual TLS to the daemon's secure port with a workload certificate from its CA. */
  secure?: {
    secureGrpcPort: number;
    /** The roots the daemon published (its `var/run/secrets/mesh/root-cert.pem`). */
    rootCertPath: string;
    /** The workload's orchestrator token (sub `system:serviceaccount:<ns>:<sa>`, audience mesh-ca). */
    token: string;
  };
}

/**
 * Starts `pilot-agent proxy` for a workload without traffic capture, running the built-in
 * proxy (no Envoy binary at binaryPath), with status and admin ports picked by the system.
 */
export async function startAgent(spec: AgentSpec): Promise<RunningAgent> {
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-agent-'));
  const secureEnv: Record<string, string> = {};
  if (spec.secure) {
    fs.writeFileSync(path.join(workDir, 'token'), spec.secure.token);
    Object.assign(secureEnv, {
      MESH_JWT_PATH: path.join(workDir, 'token'),
      CA_ROOT_CA: spec.secure.rootCertPath,
      XDS_ROOT_CA: spec.secure.rootCertPath,
      OUTPUT_CERTS: path.join(workDir, 'certs'),
    });
  }
  const proxyConfig = {
    discoveryAddress: `127.0.0.1:${spec.secure ? spec.secure.secureGrpcPort : spec.grpcPort}`,
    controlPlaneAuthPolicy: spec.secure ? 'MUTUAL_TLS' : 'NONE',
    interceptionMode: 'NONE',
    binaryPath: '/nonexistent/envoy',
    proxyAdminPort: 0,
  };
  // One proxy process per agent unless a test asks for workers (--concurrency 0 would fork one
  // per core): it keeps the suite lean; agent-concurrency.test.ts covers the workers.
  const concurrency = spec.args?.includes('--concurrency') ? [] : ['--concurrency', '1'];
  const program = startProgram('pilot-agent', ['proxy', '--meshConfig', '/nonexistent/mesh', ...concurrency, ...(spec.args ?? [])], {
    INSTANCE_IP: spec.instanceIp,
    POD_NAME: 'app',
    POD_NAMESPACE: spec.namespace,
    MESH_METAJSON_LABELS: JSON.stringify(spec.labels),
    PROXY_CONFIG: JSON.stringify(proxyConfig),
    PROXY_STATUS_PORT: '0',
    MINIMUM_DRAIN_DURATION: '0s',
    ...secureEnv,
    ...spec.env,
  }, workDir);
  const statusPort = Number(/:(\d+) /.exec(await program.waitForLog(/status server listening on :\d+ /))![1]);
  // A proxyless gRPC agent (MESH_META_GENERATOR=grpc) runs no proxy, so it has no admin port.
  if (spec.env?.MESH_META_GENERATOR === 'grpc') {
    await program.waitForLog(/proxyless gRPC/, 15_000);
    return { ...program, statusPort, adminPort: 0, workDir };
  }
  const adminPort = Number(/:(\d+)$/.exec(await program.waitForLog(/proxy admin listening on 127\.0\.0\.1:\d+/, 15_000))![1]);
  return { ...program, statusPort, adminPort, workDir };
}

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { RunningProgram, startProgram } from './program';

export interface RunningDaemon extends RunningProgram {
  grpcPort: number;
  httpPort: number;
  monitoringPort: number;
  /** The TLS gRPC port (xDS and CA); 0 when the daemon serves none. */
  secureGrpcPort: number;
  /** The HTTPS port (webhooks); 0 when the daemon serves none. */
  httpsPort: number;
  /** The introspection (ControlZ) port; 0 when it could not be bound. */
  ctrlzPort: number;
  /** The daemon's working directory: its self-signed CA and published root live under it. */
  workDir: string;
  /** The mesh roots the daemon publishes for workloads (PEM), read fresh. */
  rootCertPem(): string;
}

/**
 * Starts `pilot-discovery discovery` as a user would, on loopback with ports picked by the
 * system, in its own working directory (so its CA files never meet another test's), and
 * learns the bound ports from its start-up log lines. `workDir` lets a test put files there first.
 */
export async function startDaemon(args: string[], env: Record<string, string> = {}, options: { workDir?: string } = {}): Promise<RunningDaemon> {
  // Loopback with system-picked ports, unless the test chose an address.
  const defaults = ['--grpcAddr', '--httpAddr', '--monitoringAddr', '--secureGRPCAddr', '--httpsAddr']
    .filter((f) => !args.includes(f))
    .flatMap((f) => [f, '127.0.0.1:0']);
  // ControlZ too: its default (localhost:9876) would be shared by every daemon of a run.
  if (!args.includes('--ctrlz_port')) defaults.push('--ctrlz_port', '0');
  if (!args.includes('--ctrlz_address')) defaults.push('--ctrlz_address', '127.0.0.1');
  const workDir = options.workDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-daemon-'));
  const program = startProgram('pilot-discovery', ['discovery', ...defaults, ...args], env, workDir);
  const port = async (what: string) => Number(/(\d+)$/.exec(await program.waitForLog(new RegExp(`${what} listening on \\S+:\\d+`)))![1]);
  const httpPort = await port('HTTP discovery');
  const monitoringPort = await port('monitoring');
  await program.waitForLog(/daemon ready/);
  const grpcPort = await port('xDS \\(gRPC\\)');
  const secure = /secure gRPC \(xDS and CA\) listening on \S+:(\d+)/.exec(program.output());
  const https = /HTTPS listening on \S+:(\d+)/.exec(program.output());
  const ctrlz = /ControlZ listening on \S+:(\d+)/.exec(program.output());
  return {
    ...program,
    grpcPort,
    httpPort,
    monitoringPort,
    secureGrpcPort: secure ? Number(secure[1]) : 0,
    httpsPort: https ? Number(https[1]) : 0,
    ctrlzPort: ctrlz ? Number(ctrlz[1]) : 0,
    workDir,
    rootCertPem: () => fs.readFileSync(path.join(workDir, 'var', 'run', 'secrets', 'mesh', 'root-cert.pem'), 'utf8'),
  };
}

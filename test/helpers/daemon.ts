import { RunningProgram, startProgram } from './program';

export interface RunningDaemon extends RunningProgram {
  grpcPort: number;
  httpPort: number;
  monitoringPort: number;
}

/**
 * Starts `pilot-discovery discovery` as a user would, on loopback with ports picked by the
 * system, and learns the bound ports from its start-up log lines.
 */
export async function startDaemon(args: string[], env: Record<string, string> = {}): Promise<RunningDaemon> {
  // Loopback with system-picked ports, unless the test chose an address.
  const defaults = ['--grpcAddr', '--httpAddr', '--monitoringAddr'].filter((f) => !args.includes(f)).flatMap((f) => [f, '127.0.0.1:0']);
  const program = startProgram('pilot-discovery', ['discovery', ...defaults, ...args], env);
  const port = async (what: string) => Number(/(\d+)$/.exec(await program.waitForLog(new RegExp(`${what} listening on \\S+:\\d+`)))![1]);
  const grpcPort = await port('xDS \\(gRPC\\)');
  const httpPort = await port('HTTP discovery');
  const monitoringPort = await port('monitoring');
  await program.waitForLog(/daemon ready/);
  return { ...program, grpcPort, httpPort, monitoringPort };
}

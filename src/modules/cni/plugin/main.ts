import { CniError, CniErrorCode, cniRequestFrom, versionResult } from './cni-protocol';
import { parsePluginConfig } from './plugin-config';
import { runPlugin } from './plugin';
import { podFetcher } from './orch-pods';
import { processEnvironment } from '../../settings/environment';
import { Settings } from '../../settings/settings';

/*
 * The mesh CNI plug-in executable: the container runtime runs it once per operation with the
 * request in the environment and the config on stdin. stdout carries only the protocol's
 * JSON; logs go to stderr, which runtimes keep in their own log.
 */

const LEVELS = ['debug', 'info', 'warn', 'error'] as const;
type Level = (typeof LEVELS)[number];

function readStdin(): Promise<string> {
  return new Promise((resolve, reject) => {
    let data = '';
    process.stdin.setEncoding('utf8');
    process.stdin.on('data', (chunk: string) => (data += chunk));
    process.stdin.on('end', () => resolve(data));
    process.stdin.on('error', reject);
  });
}

async function main(): Promise<number> {
  let cniVersion = '0.3.1';
  try {
    const stdin = await readStdin();
    // Only the CNI_* variables: the runtime's environment is not the installer's.
    const request = cniRequestFrom(new Settings('mesh-cni', processEnvironment()));
    if (request.command === 'VERSION' && !stdin.trim()) {
      process.stdout.write(JSON.stringify(versionResult('1.1.0')) + '\n');
      return 0;
    }
    const config = parsePluginConfig(stdin);
    cniVersion = config.cniVersion;
    const threshold = LEVELS.indexOf((config.pluginLogLevel as Level) ?? 'info');
    const log = (level: Level, message: string) => {
      if (LEVELS.indexOf(level) >= (threshold < 0 ? 1 : threshold)) process.stderr.write(`mesh-cni ${level} ${message}\n`);
    };
    const output = await runPlugin(request, config, { fetchPod: podFetcher(config.cniAgentRunDir), log });
    if (output) process.stdout.write(JSON.stringify(output) + '\n');
    return 0;
  } catch (err) {
    const error = err instanceof CniError ? err : new CniError(CniErrorCode.IoFailure, (err as Error).message);
    process.stdout.write(JSON.stringify(error.toJson(cniVersion)) + '\n');
    process.stderr.write(`mesh-cni error ${error.message}${error.details ? `: ${error.details}` : ''}\n`);
    return 1;
  }
}

void main().then((code) => process.exit(code));

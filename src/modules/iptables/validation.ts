import { randomBytes } from 'node:crypto';
import { CommandRunner } from './command-runner';
import { PASSTHROUGH_SOURCE } from './chains';

export interface ValidationOptions {
  readonly proxyPort: string;
  readonly inboundCapturePort: string;
  readonly probePort: number;
  readonly timeoutMs: number;
  /** The probe connects as the proxy's user, whose loopback traffic the rules send to the inbound capture port. */
  readonly uid: number;
  readonly gid: number;
}

/** Exit code of a failed validation: the init container's code that race repair looks for. */
export const VALIDATION_FAILED_EXIT_CODE = 126;

export class ValidationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ValidationError';
  }
}

/*
 * The probe runs as a child Node process so that it can live in the target network namespace:
 * it listens where redirected traffic arrives (proxy and inbound capture ports) and starts a
 * client, under the proxy's UID/GID, that dials the passthrough address on the probe port.
 * Nothing listens on that port, so the client only gets an answer if the rules redirect it.
 */
const PROBE_SCRIPT = `
const net = require('node:net');
const { spawn } = require('node:child_process');
const [proxyPort, inboundPort, target, probePort, timeoutMs, uid, gid, token] = process.argv.slice(1);
const servers = [];
function listen(port) {
  return new Promise((resolve, reject) => {
    const server = net.createServer((socket) => socket.end(token));
    server.once('error', (err) => reject(new Error('cannot listen on 127.0.0.1:' + port + ': ' + err.message)));
    server.listen(Number(port), '127.0.0.1', () => { servers.push(server); resolve(); });
  });
}
const client = \`
const net = require('node:net');
const [target, port, deadline, token] = process.argv.slice(1);
function attempt() {
  let got = '';
  const s = net.connect(Number(port), target);
  s.setEncoding('utf8');
  s.on('data', (d) => { got += d; });
  s.on('end', () => process.exit(got === token ? 0 : 3));
  s.on('error', () => { if (Date.now() > Number(deadline)) process.exit(2); setTimeout(attempt, 100); });
}
attempt();\`;
Promise.all([listen(proxyPort), listen(inboundPort)]).then(() => {
  const deadline = String(Date.now() + Number(timeoutMs));
  const child = spawn(process.execPath, ['-e', client, target, probePort, deadline, token], { uid: Number(uid), gid: Number(gid), stdio: 'inherit' });
  const timer = setTimeout(() => child.kill('SIGKILL'), Number(timeoutMs) + 1000);
  child.on('exit', (code) => { clearTimeout(timer); servers.forEach((s) => s.close()); process.exit(code === null ? 2 : code); });
}, (err) => { console.error(err.message); process.exit(4); });
`;

/** Proves traffic is captured: a connection to an unserved port must reach the probe's listeners. */
export async function validateCapture(runner: CommandRunner, options: ValidationOptions): Promise<void> {
  const target = PASSTHROUGH_SOURCE.v4.split('/')[0];
  const token = randomBytes(8).toString('hex');
  const result = await runner.run(process.execPath, [
    '-e',
    PROBE_SCRIPT,
    options.proxyPort,
    options.inboundCapturePort,
    target,
    String(options.probePort),
    String(options.timeoutMs),
    String(options.uid),
    String(options.gid),
    token,
  ]);
  if (result.code === 0) return;
  const why =
    result.code === 4
      ? result.stderr.trim()
      : result.code === 3
        ? `a connection to ${target}:${options.probePort} was answered, but not by the probe`
        : `a connection to ${target}:${options.probePort} was not redirected to port ${options.inboundCapturePort} or ${options.proxyPort} within ${options.timeoutMs}ms`;
  throw new ValidationError(`iptables validation failed: ${why}`);
}

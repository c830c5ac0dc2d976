import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { createContainer } from '../../../src/container';
import { CommandScope } from '../../../src/modules/cli';
import { OrchClientOptionsToken } from '../../../src/modules/orch';
import { meshctlOrchOptions, MeshctlOrchFlags, OrchAccess } from '../../../src/modules/orch-access';
import { OrchApiServer } from '../../helpers/orch-api';
import { REPO_ROOT } from '../../helpers/run-cli';

/** OrchAccess as a meshctl command gets it: the program's container, its scope holding the options from `flags`. */
export function meshctlOrchAccess(flags: MeshctlOrchFlags): OrchAccess {
  const { container } = createContainer({ program: 'meshctl', env: {}, cwd: REPO_ROOT });
  return container.get<CommandScope>(CommandScope).resolve(OrchAccess, [[OrchClientOptionsToken, meshctlOrchOptions(flags)]]);
}

/** The server's kubeconfig in a fresh temporary directory (removed by `cleanup`). */
export function kubeconfigOf(server: OrchApiServer): { file: string; dir: string; cleanup: () => void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-reach-'));
  return { file: server.writeKubeconfigFile(dir), dir, cleanup: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

export function listenTcp(server: net.Server, host = '127.0.0.1', port = 0): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve((server.address() as net.AddressInfo).port));
  });
}

export async function until(what: string, accept: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!accept()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** The rejection of `promise` (fails when it resolves). */
export async function failureOf(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a failure, got success');
}

/** Whether this machine can listen on ::1. */
export async function hasIpv6Loopback(): Promise<boolean> {
  const probe = net.createServer();
  try {
    await listenTcp(probe, '::1');
    return true;
  } catch {
    return false;
  } finally {
    probe.close();
  }
}

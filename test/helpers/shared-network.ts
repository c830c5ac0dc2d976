import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/*
 * `npm test` runs test files in parallel processes. Most bind port 0 and stay apart, but a file
 * that starts proxies binds what its config says: a service's outbound listener on
 * 127.0.0.1:8000, a workload's inbound listener on its own 127.0.0.x address (and the demo its
 * documented ports). Two such files at once would take each other's ports, so each holds this
 * lock, shared by every test process on the machine, for its whole run.
 */

const LOCK_DIR = path.join(os.tmpdir(), 'mesh-tests-loopback-network.lock');
const OWNER_FILE = path.join(LOCK_DIR, 'owner');
const POLL_MS = 100;

let holds = 0;

/** Call at the top of a test file that starts proxies: its tests run while no other such file runs. */
export function usesSharedLoopbackNetwork(): void {
  before(async function () {
    this.timeout(0); // waiting for another file's run is not this file's time
    await acquire();
  });
  after(release);
}

/** Throws when a parallel test process starts a proxy without the lock: the file is missing usesSharedLoopbackNetwork(). */
export function assertSharedLoopbackNetworkHeld(what: string): void {
  if (holds === 0 && process.env.MOCHA_WORKER_ID !== undefined) {
    throw new Error(`${what} binds shared loopback ports: call usesSharedLoopbackNetwork() at the top of this test file`);
  }
}

async function acquire(): Promise<void> {
  if (holds++ > 0) return;
  for (;;) {
    try {
      fs.mkdirSync(LOCK_DIR);
      fs.writeFileSync(OWNER_FILE, String(process.pid));
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    if (ownerIsGone()) fs.rmSync(LOCK_DIR, { recursive: true, force: true });
    else await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

function release(): void {
  if (holds === 0 || --holds > 0) return;
  fs.rmSync(LOCK_DIR, { recursive: true, force: true });
}

function lockAgeMs(): number {
  try {
    return Date.now() - fs.statSync(LOCK_DIR).mtimeMs;
  } catch {
    return 0;
  }
}

/** A lock left by a test process that died (killed run): its owner no longer exists. */
function ownerIsGone(): boolean {
  let pid: number;
  try {
    pid = Number(fs.readFileSync(OWNER_FILE, 'utf8'));
  } catch {
    // The owner is between mkdir and writing its pid (or just released): gone only if that was long ago.
    return lockAgeMs() > 10_000;
  }
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { REPO_ROOT } from './run-cli';

/** The compiled sources, for scripts run in a child process. */
export const DIST_SRC = path.join(REPO_ROOT, 'dist', 'src');

/**
 * Runs a Node script in a child process as a user file permissions apply to: `nobody` when
 * the tests run as root (who may read anything), else the current user. The script creates
 * what it needs itself, so it owns it, and prints its findings as JSON on stdout.
 */
export function runNodeUnprivileged(script: string, timeoutMs = 15_000): unknown {
  const asNobody = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {};
  const r = spawnSync(process.execPath, ['-e', script], { ...asNobody, cwd: '/tmp', encoding: 'utf8', timeout: timeoutMs, env: { PATH: process.env.PATH ?? '' } });
  if (r.status !== 0) throw new Error(`unprivileged script failed (${r.status ?? r.signal}): ${r.stderr}`);
  return JSON.parse(r.stdout);
}

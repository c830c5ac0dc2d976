import * as fs from 'node:fs';
import * as path from 'node:path';
import { BootstrapError } from './errors';

/** Write-then-rename, so a reader (Envoy, a gRPC app) never sees half a file. */
export function writeFileAtomically(file: string, content: string, what: string): void {
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(tmp, content);
    fs.renameSync(tmp, file);
  } catch (e) {
    try {
      fs.rmSync(tmp, { force: true });
    } catch {
      // The directory itself is the problem: there is no temporary file to remove.
    }
    throw new BootstrapError(`cannot write ${what} to ${file}: ${(e as Error).message}`);
  }
}

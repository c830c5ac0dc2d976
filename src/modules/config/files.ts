import * as fs from 'node:fs';
import * as path from 'node:path';

const CONFIG_FILE = /\.(ya?ml|json)$/i;

/**
 * The config files a path names: the file itself, or every *.yaml|*.yml|*.json below a
 * directory (recursively, sorted so results are stable). Hidden entries are skipped, as
 * editors and orchestrator volume mounts keep their scratch files there.
 */
export function configFilesUnder(target: string): string[] {
  const stat = fs.statSync(target);
  if (!stat.isDirectory()) return [target];
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      if (entry.name.startsWith('.')) continue;
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (CONFIG_FILE.test(entry.name)) out.push(full);
    }
  };
  walk(target);
  return out;
}

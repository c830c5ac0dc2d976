/**
 * The upstream resolvers and search domains of the host, from resolv.conf: what the agent's
 * DNS proxy forwards unknown names to, and the first search domain it expands known names with.
 */
import * as fs from 'node:fs';
import { isIP } from 'node:net';
import { UserError } from '../../shared/user-error';

export interface Upstream {
  host: string;
  port: number;
}

export interface ResolvConf {
  nameservers: Upstream[];
  search: string[];
}

export class ResolvConfError extends UserError {}

/**
 * Reads `nameserver` and `search`/`domain` lines (the last of those two wins, as in the C
 * resolver). A nameserver may carry a port (`127.0.0.1:5353`, `[::1]:5353`), for servers that
 * do not listen on 53; a line that is not an address is an error naming the file and line.
 */
export function readResolvConf(path: string): ResolvConf {
  let text: string;
  try {
    text = fs.readFileSync(path, 'utf8');
  } catch (e) {
    throw new ResolvConfError(`cannot read the upstream resolvers from ${path}: ${(e as Error).message}`);
  }
  return parseResolvConf(text, path);
}

export function parseResolvConf(text: string, path = 'resolv.conf'): ResolvConf {
  const nameservers: Upstream[] = [];
  let search: string[] = [];
  text.split('\n').forEach((raw, i) => {
    const line = raw.replace(/[#;].*$/, '').trim();
    if (!line) return;
    const [keyword, ...args] = line.split(/\s+/);
    if (keyword === 'nameserver' && args[0]) {
      const upstream = parseNameserver(args[0]);
      if (!upstream) throw new ResolvConfError(`${path}:${i + 1}: nameserver ${args[0]} is not an IP address (optionally with :port)`);
      nameservers.push(upstream);
    } else if (keyword === 'search') {
      search = args.map(trimDot).filter(Boolean);
    } else if (keyword === 'domain' && args[0]) {
      search = [trimDot(args[0])];
    }
  });
  return { nameservers, search };
}

function parseNameserver(text: string): Upstream | undefined {
  if (isIP(text)) return { host: text, port: 53 };
  const m = /^\[([^\]]+)\]:(\d+)$/.exec(text) ?? /^([^:]+):(\d+)$/.exec(text);
  if (!m || !isIP(m[1]) || Number(m[2]) < 1 || Number(m[2]) > 65535) return undefined;
  return { host: m[1], port: Number(m[2]) };
}

function trimDot(name: string): string {
  return name.replace(/\.$/, '').toLowerCase();
}

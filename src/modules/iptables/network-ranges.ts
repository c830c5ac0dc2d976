import { BlockList, isIP } from 'node:net';
import { UserError } from '../shared/user-error';

/** Outbound address ranges of one IP version: everything (`*`) or a list of CIDRs. */
export interface NetworkRanges {
  readonly wildcard: boolean;
  readonly cidrs: readonly string[];
  /** A range covers the loopback address, so app-to-self traffic must not skip capture. */
  readonly hasLoopback: boolean;
}

export interface SplitRanges {
  readonly v4: NetworkRanges;
  readonly v6: NetworkRanges;
}

export class NetworkRangeError extends UserError {}

const NONE: NetworkRanges = { wildcard: false, cidrs: [], hasLoopback: false };
const ALL: NetworkRanges = { wildcard: true, cidrs: [], hasLoopback: false };

/** Splits `a/8,b::/64` (or `*`) into IPv4 and IPv6 ranges; a plain address counts as /32 or /128. */
export function splitRanges(value: string, what: string): SplitRanges {
  const items = splitList(value);
  if (items.length === 0) return { v4: NONE, v6: NONE };
  if (items.includes('*')) return { v4: ALL, v6: ALL };
  const v4: string[] = [];
  const v6: string[] = [];
  let loop4 = false;
  let loop6 = false;
  for (const item of items) {
    const cidr = parseCidr(item, what);
    const blocks = new BlockList();
    if (cidr.version === 4) {
      blocks.addSubnet(cidr.address, cidr.prefix, 'ipv4');
      loop4 ||= blocks.check('127.0.0.1', 'ipv4');
      v4.push(`${cidr.address}/${cidr.prefix}`);
    } else {
      blocks.addSubnet(cidr.address, cidr.prefix, 'ipv6');
      loop6 ||= blocks.check('::1', 'ipv6');
      v6.push(`${cidr.address}/${cidr.prefix}`);
    }
  }
  return { v4: { wildcard: false, cidrs: v4, hasLoopback: loop4 }, v6: { wildcard: false, cidrs: v6, hasLoopback: loop6 } };
}

export function parseCidr(text: string, what: string): { address: string; prefix: number; version: 4 | 6 } {
  const [address, prefixText, extra] = text.split('/');
  const version = isIP(address);
  if (extra !== undefined || (version !== 4 && version !== 6)) {
    throw new NetworkRangeError(`${what}: "${text}" is not an IP address or CIDR range`);
  }
  const max = version === 4 ? 32 : 128;
  const prefix = prefixText === undefined ? max : Number(prefixText);
  if (!/^\d+$/.test(prefixText ?? String(max)) || prefix > max) {
    throw new NetworkRangeError(`${what}: "${text}" has an invalid prefix length (0-${max})`);
  }
  return { address, prefix, version };
}

/** Comma-separated list with blanks dropped. */
export function splitList(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

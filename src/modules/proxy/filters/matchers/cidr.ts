import { BlockList, isIP } from 'node:net';
import { asObject, fail, requiredString, wrappedNumber } from '../shared/config';

export type AddressPredicate = (address: string | undefined) => boolean;

/** Plain textual form: IPv4-mapped IPv6 (as dual-stack sockets report peers) becomes IPv4; zone ids dropped. */
export function normalizeAddress(address: string): string {
  const withoutZone = address.replace(/%.*$/, '');
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(withoutZone);
  return mapped ? mapped[1] : withoutZone;
}

/** envoy.config.core.v3.CidrRange → predicate over an address (never matches another family). */
export function compileCidrRange(value: unknown, field: string): AddressPredicate {
  const range = asObject(value, field);
  const prefix = normalizeAddress(requiredString(range.address_prefix, `${field}.address_prefix`));
  const family = isIP(prefix);
  if (family === 0) fail(`${field}.address_prefix`, `${JSON.stringify(prefix)} is not an IP address`);
  const bits = wrappedNumber(range.prefix_len, `${field}.prefix_len`) ?? 0;
  const max = family === 4 ? 32 : 128;
  if (!Number.isInteger(bits) || bits < 0 || bits > max) fail(`${field}.prefix_len`, `must be an integer from 0 to ${max}, got ${bits}`);
  const type = family === 4 ? 'ipv4' : 'ipv6';
  const list = new BlockList();
  list.addSubnet(prefix, bits, type);
  return (address) => {
    if (address === undefined) return false;
    const candidate = normalizeAddress(address);
    return isIP(candidate) === family && list.check(candidate, type);
  };
}

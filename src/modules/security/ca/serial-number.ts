import { randomBytes } from 'node:crypto';

/** A random positive 128-bit serial number, in hex (RFC 5280: positive, at most 20 octets). */
export function randomSerialNumber(): string {
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0] & 0x7f) | 0x01; // positive, and no leading zero octet to be stripped
  return bytes.toString('hex');
}

import { isIP, isIPv6, Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import { UserError } from '../shared/user-error';

/** Where a server listens. `host` '' means every interface. */
export interface ListenAddress {
  host: string;
  port: number;
}

// A DNS name: dot-separated labels of letters, digits and inner hyphens.
const HOST_NAME = /^(?=.{1,253}\.?$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$/;

/** A malformed address flag; the message names the flag and the value. */
export class ListenAddressError extends UserError {}

/**
 * Parses a Go-style listen address (`:15014`, `127.0.0.1:0`, `[::1]:8080`, `localhost:9876`),
 * the form the daemon's address flags take. An empty host comes back as '' and means all
 * interfaces: node:net given no host binds `::` dual-stack (IPv4 and IPv6 on Linux) and
 * falls back to `0.0.0.0` when IPv6 is unavailable, which a literal '::' would not.
 * Throws an Error naming the flag and the value when the address is malformed.
 */
export function parseListenAddress(addr: string, flag: string): ListenAddress {
  const fail = (why: string): never => {
    throw new ListenAddressError(`invalid --${flag.replace(/^-+/, '')} ${JSON.stringify(addr)}: ${why}`);
  };
  let host: string;
  let port: string;
  if (addr.startsWith('[')) {
    const close = addr.indexOf(']');
    if (close < 0) fail('missing "]" after an IPv6 address');
    host = addr.slice(1, close);
    const rest = addr.slice(close + 1);
    if (!rest.startsWith(':')) fail('missing port (expected [host]:port)');
    port = rest.slice(1);
    // A zone (`fe80::1%eth0`) is allowed, as Go allows it.
    if (!isIPv6(host.split('%')[0])) fail(`"${host}" is not an IPv6 address`);
  } else {
    const colon = addr.lastIndexOf(':');
    if (colon < 0) fail('missing port (expected host:port or :port)');
    host = addr.slice(0, colon);
    port = addr.slice(colon + 1);
    if (host.includes(':')) fail('too many colons; write an IPv6 address in brackets, e.g. [::1]:8080');
    if (host !== '' && !isIP(host) && (/^[\d.]+$/.test(host) || !HOST_NAME.test(host))) {
      fail(`"${host}" is not an IP address or host name`);
    }
  }
  // Go would read an empty port as "any"; for an operator's flag that is more likely a typo.
  if (!/^\d{1,5}$/.test(port) || Number(port) > 65535) fail('port must be a number from 0 to 65535');
  return { host, port: Number(port) };
}

/** `host:port` for messages, with IPv6 hosts bracketed and '' shown as `:port`, as Go prints them. */
export function formatListenAddress({ host, port }: ListenAddress): string {
  return `${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/** Listens on `address` and resolves with the address actually bound (port 0 becomes the chosen port). */
export function listenOn(server: Server, address: ListenAddress, what: string): Promise<ListenAddress> {
  return new Promise((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException) => {
      reject(Object.assign(new Error(`${what}: cannot listen on ${formatListenAddress(address)}: ${err.message}`), { code: err.code }));
    };
    server.once('error', onError);
    server.listen({ host: address.host || undefined, port: address.port }, () => {
      server.off('error', onError);
      const bound = server.address() as AddressInfo;
      resolve({ host: bound.address, port: bound.port });
    });
  });
}

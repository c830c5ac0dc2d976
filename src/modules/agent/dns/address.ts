/** DNS_PROXY_ADDR: where the agent's DNS proxy listens (`host:port`, default `localhost:15053`). */
import { isIP } from 'node:net';
import { UserError } from '../../shared/user-error';

export const DEFAULT_DNS_PROXY_ADDR = 'localhost:15053';

export class DnsProxyAddressError extends UserError {}

export interface DnsProxyAddress {
  /** As written: `localhost`, an IPv4 or IPv6 address (without brackets), or a host name. */
  host: string;
  port: number;
}

/** Parses `host:port`, `[v6]:port` or `:port` (all addresses); errors name the setting. */
export function parseDnsProxyAddress(value: string, setting = 'DNS_PROXY_ADDR'): DnsProxyAddress {
  const fail = (why: string) => new DnsProxyAddressError(`${setting}=${JSON.stringify(value)}: ${why}; expected host:port, e.g. ${DEFAULT_DNS_PROXY_ADDR} or [::1]:15053`);
  const text = value.trim();
  let host: string;
  let portText: string;
  const bracketed = /^\[([^\]]+)\]:(\d*)$/.exec(text);
  if (bracketed) {
    [, host, portText] = bracketed;
    if (isIP(host) !== 6) throw fail(`${host} in brackets is not an IPv6 address`);
  } else {
    const colon = text.lastIndexOf(':');
    if (colon < 0) throw fail('no port');
    host = text.slice(0, colon);
    portText = text.slice(colon + 1);
    if (host.includes(':')) throw fail('an IPv6 address must be written in brackets');
  }
  if (!/^\d+$/.test(portText)) throw fail(`port ${JSON.stringify(portText)} is not a number`);
  const port = Number(portText);
  if (port > 65535) throw fail(`port ${port} is above 65535`);
  return { host, port };
}

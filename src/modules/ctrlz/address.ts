import { ListenAddress, ListenAddressError, parseListenAddress } from '../monitoring/listen-address';

/**
 * `--ctrlz_address` and `--ctrlz_port` as a listen address. `*` is every interface.
 * `localhost` is 127.0.0.1, where Go's listener puts it too: node would take whichever
 * address the resolver lists first, and a port-forward reaches the pod's IPv4 loopback.
 */
export function ctrlzListenAddress(address: string, port: number): ListenAddress {
  if (address === '*') return { host: '', port };
  if (address === 'localhost') return { host: '127.0.0.1', port };
  const host = address.includes(':') && !address.startsWith('[') ? `[${address}]` : address;
  try {
    return parseListenAddress(`${host}:${port}`, '--ctrlz_address');
  } catch {
    throw new ListenAddressError(`invalid --ctrlz_address ${JSON.stringify(address)}: expected an IP address, a host name, localhost or * (all addresses)`);
  }
}

import { NetworkRangeError, parseCidr, splitList, splitRanges, SplitRanges } from './network-ranges';
import { UserError } from '../shared/user-error';

/** What to capture and where to send it: everything the rule builder needs, validated. */
export interface CaptureConfig {
  readonly proxyPort: string;
  readonly inboundCapturePort: string;
  readonly inboundTunnelPort: string;
  readonly proxyUids: readonly string[];
  readonly proxyGids: readonly string[];
  readonly inboundInterceptionMode: 'REDIRECT' | 'TPROXY';
  readonly inboundTproxyMark: string;
  readonly inboundTproxyRouteTable: string;
  /** `*` = every port, a list = those ports, empty = no inbound capture. */
  readonly inboundPortsInclude: '*' | readonly string[];
  readonly inboundPortsExclude: readonly string[];
  readonly outboundPortsInclude: readonly string[];
  readonly outboundPortsExclude: readonly string[];
  readonly outboundRangesInclude: SplitRanges;
  readonly outboundRangesExclude: SplitRanges;
  readonly excludeInterfaces: readonly string[];
  readonly orchVirtInterfaces: readonly string[];
  readonly ownerGroupsInclude: string;
  readonly ownerGroupsExclude: string;
  readonly hostIpv4LoopbackCidr: string;
  readonly redirectDns: boolean;
  readonly captureAllDns: boolean;
  readonly dnsServersV4: readonly string[];
  readonly dnsServersV6: readonly string[];
  readonly dropInvalid: boolean;
  readonly dualStack: boolean;
}

/** The raw values, as flags and settings give them (names are the flags' without `--mesh-`). */
export interface CaptureInput {
  proxyPort: string;
  inboundCapturePort: string;
  inboundTunnelPort: string;
  proxyUid: string;
  proxyGid: string;
  inboundInterceptionMode: string;
  inboundTproxyMark: string;
  inboundTproxyRouteTable: string;
  inboundPorts: string;
  localExcludePorts: string;
  outboundPorts: string;
  localOutboundPortsExclude: string;
  serviceCidr: string;
  serviceExcludeCidr: string;
  excludeInterfaces: string;
  orchVirtInterfaces: string;
  ownerGroupsInclude: string;
  ownerGroupsExclude: string;
  hostIpv4LoopbackCidr: string;
  redirectDns: boolean;
  captureAllDns: boolean;
  dnsServers: readonly string[];
  dropInvalid: boolean;
  dualStack: boolean;
}

/** A value the capture configuration cannot use; the message names the flag. */
export class CaptureConfigError extends UserError {
  constructor(message: string) {
    super(message);
  }
}

/** Validates the raw input; every error names the flag that carries the bad value. */
export function captureConfigFrom(input: CaptureInput): CaptureConfig {
  try {
    const mode = (input.inboundInterceptionMode || 'REDIRECT').toUpperCase();
    if (mode !== 'REDIRECT' && mode !== 'TPROXY') {
      throw new CaptureConfigError(`--mesh-inbound-interception-mode: "${input.inboundInterceptionMode}" is not REDIRECT or TPROXY`);
    }
    const proxyUids = ids(input.proxyUid, '--proxy-uid');
    const exclude = splitRanges(input.serviceExcludeCidr, '--mesh-service-exclude-cidr');
    if (exclude.v4.wildcard) throw new CaptureConfigError('--mesh-service-exclude-cidr: "*" would exclude everything; list ranges instead');
    const inbound = input.inboundPorts.trim();
    const loopback = parseCidr(input.hostIpv4LoopbackCidr, 'MESH_OUTBOUND_IPV4_LOOPBACK_CIDR');
    if (loopback.version !== 4) throw new CaptureConfigError(`MESH_OUTBOUND_IPV4_LOOPBACK_CIDR: "${input.hostIpv4LoopbackCidr}" is not an IPv4 range`);
    return {
      proxyPort: port(input.proxyPort, '--proxy-port'),
      inboundCapturePort: port(input.inboundCapturePort, '--inbound-capture-port'),
      inboundTunnelPort: port(input.inboundTunnelPort, '--inbound-tunnel-port'),
      proxyUids,
      // The incumbent exempts the proxy's UID as a GID too when no GID is given.
      proxyGids: input.proxyGid.trim() ? ids(input.proxyGid, '--proxy-gid') : proxyUids,
      inboundInterceptionMode: mode,
      inboundTproxyMark: integer(input.inboundTproxyMark, '--mesh-inbound-tproxy-mark'),
      inboundTproxyRouteTable: integer(input.inboundTproxyRouteTable, '--mesh-inbound-tproxy-route-table'),
      inboundPortsInclude: inbound === '*' ? '*' : ports(inbound, '--mesh-inbound-ports'),
      inboundPortsExclude: ports(input.localExcludePorts, '--mesh-local-exclude-ports'),
      outboundPortsInclude: ports(input.outboundPorts, '--mesh-outbound-ports'),
      outboundPortsExclude: ports(input.localOutboundPortsExclude, '--mesh-local-outbound-ports-exclude'),
      outboundRangesInclude: splitRanges(input.serviceCidr, '--mesh-service-cidr'),
      outboundRangesExclude: exclude,
      excludeInterfaces: interfaces(input.excludeInterfaces, '--mesh-exclude-interfaces'),
      orchVirtInterfaces: interfaces(input.orchVirtInterfaces, '--orch-virt-interfaces'),
      ownerGroupsInclude: input.ownerGroupsInclude.trim() || '*',
      ownerGroupsExclude: input.ownerGroupsExclude.trim(),
      hostIpv4LoopbackCidr: `${loopback.address}/${loopback.prefix}`,
      redirectDns: input.redirectDns,
      captureAllDns: input.captureAllDns,
      dnsServersV4: input.dnsServers.filter((s) => s.includes('.')),
      dnsServersV6: input.dnsServers.filter((s) => s.includes(':')),
      dropInvalid: input.dropInvalid,
      dualStack: input.dualStack,
    };
  } catch (err) {
    if (err instanceof NetworkRangeError) throw new CaptureConfigError(err.message);
    throw err;
  }
}

/** A port or an `a:b` range, as `--dport` takes it. */
function ports(value: string, flag: string): string[] {
  const list = splitList(value);
  for (const item of list) {
    const bounds = item.split(':');
    if (bounds.length > 2 || !bounds.every(isPortNumber)) {
      throw new CaptureConfigError(`${flag}: "${item}" is not a port (0-65535) or a port range (a:b)`);
    }
  }
  return list;
}

function port(value: string, flag: string): string {
  const text = value.trim();
  if (!isPortNumber(text)) throw new CaptureConfigError(`${flag}: "${value}" is not a port (0-65535)`);
  return text;
}

function isPortNumber(text: string): boolean {
  return /^\d{1,5}$/.test(text) && Number(text) <= 65535;
}

function integer(value: string, flag: string): string {
  const text = value.trim();
  if (!/^\d+$/.test(text)) throw new CaptureConfigError(`${flag}: "${value}" is not a non-negative integer`);
  return text;
}

function ids(value: string, flag: string): string[] {
  const list = splitList(value);
  for (const id of list) if (!/^\d+$/.test(id)) throw new CaptureConfigError(`${flag}: "${id}" is not a numeric ID`);
  return list;
}

function interfaces(value: string, flag: string): string[] {
  const list = splitList(value);
  for (const name of list) {
    // Linux interface names: up to 15 bytes, no slash or whitespace.
    if (name.length > 15 || /[\s/]/.test(name)) throw new CaptureConfigError(`${flag}: "${name}" is not an interface name`);
  }
  return list;
}

/** Name servers of a resolver configuration (resolv.conf), in file order. */
export function nameServersOf(resolvConf: string): string[] {
  const servers: string[] = [];
  for (const line of resolvConf.split('\n')) {
    const match = /^\s*nameserver\s+(\S+)/.exec(line);
    if (match) servers.push(match[1].replace(/%.*$/, ''));
  }
  return servers;
}

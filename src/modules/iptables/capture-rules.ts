import { CaptureConfig } from './capture-config';
import { AGENT_DNS_PORT, Chain, LOOPBACK_V6, OUTBOUND_MARK, PASSTHROUGH_SOURCE } from './chains';
import { NetworkRanges } from './network-ranges';
import { RuleSet, Table, VERSIONED_ADDRESS as ADDRESS } from './rule-set';

/*
 * The capture rules, in the incumbent's order so that the same flags give the same
 * iptables-restore input (the conformance cases compare it line by line). Rules are
 * evaluated top to bottom, so the order below is also the semantics: exclusions first,
 * then the proxy's own traffic, then loopback, then the ranges and ports to capture.
 */
export function captureRules(config: CaptureConfig): RuleSet {
  const rules = new RuleSet();
  const loopback = { v4: config.hostIpv4LoopbackCidr, v6: LOOPBACK_V6 };

  excludeInterfaces(rules, config);
  for (const name of config.orchVirtInterfaces) rules.insert('nat', 'PREROUTING', 1, '-i', name, '-j', 'RETURN');

  if (config.dropInvalid) {
    // Out-of-window packets are dropped rather than answered with a reset that kills the connection.
    rules.append('mangle', 'PREROUTING', '-m', 'conntrack', '--ctstate', 'INVALID', '-j', Chain.Drop);
    rules.append('mangle', Chain.Drop, '-j', 'DROP');
  }

  rules.append('nat', Chain.Inbound, '-p', 'tcp', '--dport', config.inboundTunnelPort, '-j', 'RETURN');
  rules.append('nat', Chain.Redirect, '-p', 'tcp', '-j', 'REDIRECT', '--to-ports', config.proxyPort);
  rules.append('nat', Chain.InRedirect, '-p', 'tcp', '-j', 'REDIRECT', '--to-ports', config.inboundCapturePort);

  inboundPorts(rules, config);

  rules.append('nat', 'OUTPUT', '-j', Chain.Output);
  for (const port of config.outboundPortsExclude) rules.append('nat', Chain.Output, '-p', 'tcp', '--dport', port, '-j', 'RETURN');
  rules.appendVersioned(PASSTHROUGH_SOURCE.v4, PASSTHROUGH_SOURCE.v6, 'nat', Chain.Output, '-o', 'lo', '-s', ADDRESS, '-j', 'RETURN');

  const loopbackCaptured = config.outboundRangesInclude.v4.hasLoopback || config.outboundRangesInclude.v6.hasLoopback;
  for (const uid of config.proxyUids) ownerRules(rules, config, loopback, 'uid', uid, loopbackCaptured);
  for (const gid of config.proxyGids) ownerRules(rules, config, loopback, 'gid', gid, loopbackCaptured);

  ownerGroups(rules, config);
  if (config.redirectDns) dnsRedirect(rules, config);

  // Apps that talk to localhost on purpose (sidecar-aware apps, container to container) are left alone.
  rules.appendVersioned(loopback.v4, loopback.v6, 'nat', Chain.Output, '-d', ADDRESS, '-j', 'RETURN');
  for (const cidr of config.outboundRangesExclude.v4.cidrs) rules.appendV4('nat', Chain.Output, '-d', cidr, '-j', 'RETURN');
  for (const cidr of config.outboundRangesExclude.v6.cidrs) rules.appendV6('nat', Chain.Output, '-d', cidr, '-j', 'RETURN');

  for (const port of config.outboundPortsInclude) rules.append('nat', Chain.Output, '-p', 'tcp', '--dport', port, '-j', Chain.Redirect);
  outboundRanges(rules, config, config.outboundRangesInclude.v4, 4);
  outboundRanges(rules, config, config.outboundRangesInclude.v6, 6);

  if (config.redirectDns) dnsConntrackZones(rules, config);
  if (config.inboundInterceptionMode === 'TPROXY') tproxyMarks(rules, config);
  return rules;
}

function excludeInterfaces(rules: RuleSet, config: CaptureConfig): void {
  for (const name of config.excludeInterfaces) {
    rules.append('nat', 'PREROUTING', '-i', name, '-j', 'RETURN');
    rules.append('nat', 'OUTPUT', '-o', name, '-j', 'RETURN');
  }
  if (config.inboundInterceptionMode !== 'TPROXY') return;
  for (const name of config.excludeInterfaces) {
    rules.append('mangle', 'PREROUTING', '-i', name, '-j', 'RETURN');
    rules.append('mangle', 'OUTPUT', '-o', name, '-j', 'RETURN');
  }
}

function inboundPorts(rules: RuleSet, config: CaptureConfig): void {
  const include = config.inboundPortsInclude;
  if (include !== '*' && include.length === 0) return;
  const tproxy = config.inboundInterceptionMode === 'TPROXY';
  const table = tproxy ? 'mangle' : 'nat';
  if (tproxy) {
    // Marked packets are routed to loopback (policy route), where the TPROXY socket picks them up.
    rules.append('mangle', Chain.Divert, '-j', 'MARK', '--set-mark', config.inboundTproxyMark);
    rules.append('mangle', Chain.Divert, '-j', 'ACCEPT');
    rules.appendVersioned('127.0.0.1/32', LOOPBACK_V6, 'mangle', Chain.Tproxy, '!', '-d', ADDRESS, '-p', 'tcp', '-j', 'TPROXY',
      '--tproxy-mark', `${config.inboundTproxyMark}/0xffffffff`, '--on-port', config.inboundCapturePort);
  }
  rules.append(table, 'PREROUTING', '-p', 'tcp', '-j', Chain.Inbound);
  const capture = (...match: string[]): void => {
    if (tproxy) {
      rules.append('mangle', Chain.Inbound, '-p', 'tcp', ...match, '-m', 'conntrack', '--ctstate', 'RELATED,ESTABLISHED', '-j', Chain.Divert);
      rules.append('mangle', Chain.Inbound, '-p', 'tcp', ...match, '-j', Chain.Tproxy);
    } else {
      rules.append('nat', Chain.Inbound, '-p', 'tcp', ...match, '-j', Chain.InRedirect);
    }
  };
  if (include === '*') {
    for (const port of config.inboundPortsExclude) rules.append(table, Chain.Inbound, '-p', 'tcp', '--dport', port, '-j', 'RETURN');
    capture();
  } else {
    for (const port of include) capture('--dport', port);
  }
}

/** The proxy's own traffic: back to itself through the inbound side when it calls the app via a VIP, never looped otherwise. */
function ownerRules(
  rules: RuleSet,
  config: CaptureConfig,
  loopback: { v4: string; v6: string },
  kind: 'uid' | 'gid',
  id: string,
  loopbackCaptured: boolean,
): void {
  const owner = `--${kind}-owner`;
  // With DNS capture, port 53 on loopback stays with the agent (uid rule only, as the incumbent does).
  const skipPorts =
    config.redirectDns && kind === 'uid'
      ? ['-m', 'multiport', '!', '--dports', `53,${config.inboundTunnelPort}`]
      : ['!', '--dport', config.inboundTunnelPort];
  rules.appendVersioned(loopback.v4, loopback.v6, 'nat', Chain.Output,
    '-o', 'lo', '!', '-d', ADDRESS, '-p', 'tcp', ...skipPorts, '-m', 'owner', owner, id, '-j', Chain.InRedirect);
  if (!loopbackCaptured) {
    // App to itself over loopback is not captured; TCP to a local DNS server still is, when DNS is captured.
    const dnsKept = config.redirectDns ? ['-p', 'tcp', '!', '--dport', '53'] : [];
    rules.append('nat', Chain.Output, '-o', 'lo', ...dnsKept, '-m', 'owner', '!', owner, id, '-j', 'RETURN');
  }
  rules.append('nat', Chain.Output, '-m', 'owner', owner, id, '-j', 'RETURN');
}

/** MESH_OUTBOUND_OWNER_GROUPS(_EXCLUDE): only some groups' traffic is captured. */
function ownerGroups(rules: RuleSet, config: CaptureConfig): void {
  const include = config.ownerGroupsInclude;
  if (include === '*') {
    for (const group of split(config.ownerGroupsExclude)) rules.append('nat', Chain.Output, '-m', 'owner', '--gid-owner', group, '-j', 'RETURN');
    return;
  }
  const notAnyOf = split(include).flatMap((group) => ['-m', 'owner', '!', '--gid-owner', group]);
  rules.append('nat', Chain.Output, ...notAnyOf, '-j', 'RETURN');
}

/** DNS to the resolv.conf servers (or to anyone, with --capture-all-dns) goes to the agent. */
function dnsRedirect(rules: RuleSet, config: CaptureConfig): void {
  const redirect = (version: 4 | 6, servers: readonly string[], hostBits: string): void => {
    if (!config.captureAllDns && servers.length === 0) return;
    const add = appenderFor(rules, version, 'nat');
    add(Chain.Output, '-j', Chain.OutputDns);
    if (config.captureAllDns) {
      add(Chain.OutputDns, '-p', 'tcp', '--dport', '53', '-j', 'REDIRECT', '--to-ports', AGENT_DNS_PORT);
      add(Chain.OutputDns, '-p', 'udp', '--dport', '53', '-j', 'REDIRECT', '--to-port', AGENT_DNS_PORT);
      return;
    }
    // Only the configured servers: a local DNS forwarder's own upstream queries must not loop back to the agent.
    for (const server of servers) {
      add(Chain.OutputDns, '-p', 'tcp', '--dport', '53', '-d', `${server}/${hostBits}`, '-j', 'REDIRECT', '--to-ports', AGENT_DNS_PORT);
    }
    for (const server of servers) {
      add(Chain.OutputDns, '-p', 'udp', '--dport', '53', '-d', `${server}/${hostBits}`, '-j', 'REDIRECT', '--to-port', AGENT_DNS_PORT);
    }
  };
  redirect(4, config.dnsServersV4, '32');
  if (config.dualStack) redirect(6, config.dnsServersV6, '128');
}

/**
 * Separate conntrack zones for the app's and the agent's DNS packets, so the agent's upstream
 * query and the app's redirected query, which share addresses and ports, are not one flow.
 */
function dnsConntrackZones(rules: RuleSet, config: CaptureConfig): void {
  rules.append('raw', 'OUTPUT', '-j', Chain.OutputDns);
  for (const [kind, ids] of [['uid', config.proxyUids], ['gid', config.proxyGids]] as const) {
    for (const id of ids) {
      rules.append('raw', Chain.OutputDns, '-p', 'udp', '--dport', '53', '-m', 'owner', `--${kind}-owner`, id, '-j', 'CT', '--zone', '1');
      rules.append('raw', Chain.OutputDns, '-p', 'udp', '--sport', AGENT_DNS_PORT, '-m', 'owner', `--${kind}-owner`, id, '-j', 'CT', '--zone', '2');
    }
  }
  const zones = (version: 4 | 6, servers: readonly string[], hostBits: string): void => {
    const add = appenderFor(rules, version, 'raw');
    if (config.captureAllDns) {
      add('PREROUTING', '-j', Chain.Inbound);
      add(Chain.OutputDns, '-p', 'udp', '--dport', '53', '-j', 'CT', '--zone', '2');
      add(Chain.Inbound, '-p', 'udp', '--sport', '53', '-j', 'CT', '--zone', '1');
      return;
    }
    if (servers.length === 0) return;
    add('PREROUTING', '-j', Chain.Inbound);
    for (const server of servers) {
      add(Chain.OutputDns, '-p', 'udp', '--dport', '53', '-d', `${server}/${hostBits}`, '-j', 'CT', '--zone', '2');
      add(Chain.Inbound, '-p', 'udp', '--sport', '53', '-s', `${server}/${hostBits}`, '-j', 'CT', '--zone', '1');
    }
  };
  zones(4, config.dnsServersV4, '32');
  if (config.dualStack) zones(6, config.dnsServersV6, '128');
}

function outboundRanges(rules: RuleSet, config: CaptureConfig, ranges: NetworkRanges, version: 4 | 6): void {
  const append = appenderFor(rules, version, 'nat');
  const insert = (...params: string[]) =>
    version === 4 ? rules.insertV4('nat', 'PREROUTING', 1, ...params) : rules.insertV6('nat', 'PREROUTING', 1, ...params);
  if (ranges.wildcard) {
    append(Chain.Output, '-j', Chain.Redirect);
    // Traffic arriving on a virtual (VM) interface is the VM's outbound traffic.
    for (const name of config.orchVirtInterfaces) insert('-i', name, '-j', Chain.Redirect);
    return;
  }
  for (const cidr of ranges.cidrs) {
    for (const name of config.orchVirtInterfaces) insert('-i', name, '-d', cidr, '-j', Chain.Redirect);
    append(Chain.Output, '-d', cidr, '-j', Chain.Redirect);
  }
}

/** TPROXY: keep the original-source mark across the connection and keep the proxy's loopback traffic out of capture. */
function tproxyMarks(rules: RuleSet, config: CaptureConfig): void {
  const mark = config.inboundTproxyMark;
  rules.append('mangle', 'PREROUTING', '-p', 'tcp', '-m', 'mark', '--mark', mark, '-j', 'CONNMARK', '--save-mark');
  rules.append('mangle', 'OUTPUT', '-p', 'tcp', '-o', 'lo', '-m', 'mark', '--mark', mark, '-j', 'RETURN');
  for (const [kind, ids] of [['uid', config.proxyUids], ['gid', config.proxyGids]] as const) {
    for (const id of ids) {
      rules.appendVersioned('127.0.0.1/32', LOOPBACK_V6, 'mangle', 'OUTPUT',
        '!', '-d', ADDRESS, '-p', 'tcp', '-o', 'lo', '-m', 'owner', `--${kind}-owner`, id, '-j', 'MARK', '--set-mark', OUTBOUND_MARK);
    }
  }
  rules.append('mangle', 'OUTPUT', '-p', 'tcp', '-m', 'connmark', '--mark', mark, '-j', 'CONNMARK', '--restore-mark');
  rules.insert('mangle', Chain.Inbound, 1, '-p', 'tcp', '-m', 'mark', '--mark', mark, '-j', 'RETURN');
  rules.insertV4('mangle', Chain.Inbound, 2, '-p', 'tcp', '-s', PASSTHROUGH_SOURCE.v4, '-i', 'lo', '-j', 'RETURN');
  rules.insertV6('mangle', Chain.Inbound, 2, '-p', 'tcp', '-s', PASSTHROUGH_SOURCE.v6, '-i', 'lo', '-j', 'RETURN');
  rules.insert('mangle', Chain.Inbound, 3, '-p', 'tcp', '-i', 'lo', '-m', 'mark', '!', '--mark', OUTBOUND_MARK, '-j', 'RETURN');
}

function appenderFor(rules: RuleSet, version: 4 | 6, table: Table): (chain: string, ...params: string[]) => void {
  return (chain, ...params) => (version === 4 ? rules.appendV4(table, chain, ...params) : rules.appendV6(table, chain, ...params));
}

function split(value: string): string[] {
  return value.split(',').map((s) => s.trim()).filter(Boolean);
}

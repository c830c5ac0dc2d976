import { readFileSync } from 'node:fs';
import { inject } from 'inversify';
import { boolFlag, command, durationFlag, MeshCommand, stringFlag, uint16Flag } from '../../src/modules/cli';
import {
  captureConfigFrom,
  captureRules,
  CommandRunner,
  dryRunText,
  IptablesApplier,
  nameServersOf,
  proxyUidOf,
  validateCapture,
  VALIDATION_FAILED_EXIT_CODE,
  ValidationError,
} from '../../src/modules/iptables';
import { Settings, SettingsToken } from '../../src/modules/settings';

/** Flags of `pilot-agent mesh-iptables` (spec/02), product names per the naming rule. */
export const meshIptablesFlags = {
  'capture-all-dns': boolFlag('capture all DNS traffic on port 53 (effective with --redirect-dns)'),
  'cleanup-only': boolFlag('forced cleanup without creating chains or rules'),
  'cni-mode': boolFlag('whether to run as a CNI plugin'),
  'drop-invalid': boolFlag('drop invalid packets'),
  'dry-run': boolFlag('do not call any external dependencies like iptables', { char: 'n' }),
  'dual-stack': boolFlag('configure redirects for IPv4 and IPv6'),
  'proxy-port': stringFlag('port to which all TCP traffic from the pod is redirected', { char: 'p', default: '15001' }),
  'force-apply': boolFlag('apply iptables changes even if they appear already in place'),
  'inbound-capture-port': stringFlag('port to which all inbound TCP traffic to the pod is redirected', { char: 'z', default: '15006' }),
  'inbound-tunnel-port': stringFlag('tunnel port for inbound TCP traffic', { char: 'e', default: '15008' }),
  'iptables-probe-port': uint16Flag('port to listen on for failure detection', { default: 15002 }),
  'mesh-exclude-interfaces': stringFlag('comma-separated interfaces whose traffic is not captured', { char: 'c', default: '' }),
  'mesh-inbound-interception-mode': stringFlag('mode used to redirect inbound connections: REDIRECT or TPROXY', { char: 'm', default: '' }),
  'mesh-inbound-ports': stringFlag('comma-separated inbound ports to redirect; "*" for all; empty disables inbound redirection', {
    char: 'b',
    default: '',
  }),
  'mesh-inbound-tproxy-mark': stringFlag('mark for transparent proxying', { char: 't', default: '1337' }),
  'mesh-inbound-tproxy-route-table': stringFlag('route table for transparent proxying', { char: 'r', default: '133' }),
  'mesh-local-exclude-ports': stringFlag('comma-separated inbound ports excluded when "*" is redirected', { char: 'd', default: '' }),
  'mesh-local-outbound-ports-exclude': stringFlag('comma-separated outbound ports excluded from redirection', { char: 'o', default: '' }),
  'mesh-outbound-ports': stringFlag('comma-separated outbound ports explicitly included', { char: 'q', default: '' }),
  'mesh-service-cidr': stringFlag('comma-separated CIDR ranges redirected; "*" for all; empty disables all outbound redirection', {
    char: 'i',
    default: '',
  }),
  'mesh-service-exclude-cidr': stringFlag('comma-separated CIDR ranges excluded when "*" is redirected', { char: 'x', default: '' }),
  'orch-virt-interfaces': stringFlag('comma-separated virtual interfaces whose inbound traffic is treated as outbound', { char: 'k', default: '' }),
  'network-namespace': stringFlag('network namespace the rules apply to', { default: '' }),
  'probe-timeout': durationFlag('failure detection timeout', { default: '5s' }),
  'proxy-gid': stringFlag('GID exempt from redirection', { char: 'g', default: '' }),
  'proxy-uid': stringFlag('UID exempt from redirection (normally the proxy container)', { char: 'u', default: '' }),
  reconcile: boolFlag('reconcile pre-existing incompatible rules instead of failing'),
  'redirect-dns': boolFlag('capture DNS traffic and send it to the agent'),
  'run-validation': boolFlag('validate the iptables rules after applying them'),
  'skip-rule-apply': boolFlag('skip applying the rules'),
};

/** Where the resolver configuration is read, for the DNS servers whose traffic --redirect-dns captures. */
const RESOLV_CONF = '/etc/resolv.conf';

@command({
  program: 'pilot-agent',
  path: 'mesh-iptables',
  summary: 'Set up port forwarding for the sidecar',
  flags: meshIptablesFlags,
})
export class MeshIptables extends MeshCommand {
  @inject(SettingsToken) private readonly settings!: Settings;

  async run(): Promise<void> {
    const { flags, metadata } = await this.parse(MeshIptables);
    const settings = this.settings;
    const log = this.logging.scope('default');
    // A setting supplies a flag's value when the flag is not on the command line (the incumbent's env defaults).
    const given = (name: keyof typeof meshIptablesFlags) => metadata.flags[name]?.setFromDefault !== true;
    const fromSetting = (name: keyof typeof meshIptablesFlags, flagValue: string, setting: string) =>
      !given(name) && setting ? setting : flagValue;

    const redirectDns = given('redirect-dns') ? flags['redirect-dns'] : settings.bool('MESH_META_DNS_CAPTURE');
    // A CaptureConfigError is a UserError: the program runner reports it.
    const config = captureConfigFrom({
      proxyPort: flags['proxy-port'],
      inboundCapturePort: flags['inbound-capture-port'],
      inboundTunnelPort: flags['inbound-tunnel-port'],
      proxyUid: flags['proxy-uid'] || proxyUidOf(settings.string('PROXY_USER') || 'mesh-proxy'),
      proxyGid: flags['proxy-gid'],
      inboundInterceptionMode: fromSetting('mesh-inbound-interception-mode', flags['mesh-inbound-interception-mode'], settings.string('INBOUND_INTERCEPTION_MODE')),
      inboundTproxyMark: fromSetting('mesh-inbound-tproxy-mark', flags['mesh-inbound-tproxy-mark'], settings.string('INBOUND_TPROXY_MARK')),
      inboundTproxyRouteTable: flags['mesh-inbound-tproxy-route-table'],
      inboundPorts: flags['mesh-inbound-ports'],
      localExcludePorts: flags['mesh-local-exclude-ports'],
      outboundPorts: flags['mesh-outbound-ports'],
      localOutboundPortsExclude: flags['mesh-local-outbound-ports-exclude'],
      serviceCidr: flags['mesh-service-cidr'],
      serviceExcludeCidr: flags['mesh-service-exclude-cidr'],
      excludeInterfaces: flags['mesh-exclude-interfaces'],
      orchVirtInterfaces: flags['orch-virt-interfaces'],
      ownerGroupsInclude: settings.string('MESH_OUTBOUND_OWNER_GROUPS'),
      ownerGroupsExclude: settings.string('MESH_OUTBOUND_OWNER_GROUPS_EXCLUDE'),
      hostIpv4LoopbackCidr: settings.string('MESH_OUTBOUND_IPV4_LOOPBACK_CIDR'),
      redirectDns,
      // A CNI plug-in cannot see the pod's resolver configuration, so it captures all DNS.
      captureAllDns: flags['capture-all-dns'] || flags['cni-mode'],
      dnsServers: redirectDns && !flags['cni-mode'] ? readNameServers(log.warn.bind(log)) : [],
      dropInvalid: flags['drop-invalid'],
      dualStack: given('dual-stack') ? flags['dual-stack'] : settings.bool('MESH_DUAL_STACK'),
    });
    const rules = captureRules(config);

    if (flags['dry-run']) {
      this.write(dryRunText(rules, config));
      if (flags['run-validation']) log.info('dry run: validation skipped (it needs the rules applied)');
      return;
    }
    const runner = new CommandRunner(flags['network-namespace'] || undefined);
    const applier = new IptablesApplier(runner, (message) => log.info(message));
    try {
      if (flags['cleanup-only']) {
        await applier.cleanup(rules, config);
        log.info('mesh iptables rules removed');
        return;
      }
      if (flags['skip-rule-apply']) {
        log.info('--skip-rule-apply: not changing iptables');
      } else {
        const outcome = await applier.apply(rules, config, { reconcile: flags.reconcile, forceApply: flags['force-apply'] });
        log.info(`mesh iptables rules ${outcome}`);
      }
      if (flags['run-validation']) {
        await validateCapture(runner, {
          proxyPort: config.proxyPort,
          inboundCapturePort: config.inboundCapturePort,
          probePort: flags['iptables-probe-port'],
          timeoutMs: flags['probe-timeout'].milliseconds,
          uid: Number(config.proxyUids[0] ?? '1337'),
          gid: Number(config.proxyGids[0] ?? '1337'),
        });
        log.info('iptables validation passed: outbound traffic is captured');
      }
    } catch (err) {
      if (err instanceof ValidationError) this.fail(err.message, VALIDATION_FAILED_EXIT_CODE);
      this.fail((err as Error).message);
    }
  }
}

function readNameServers(warn: (message: string) => void): string[] {
  try {
    return nameServersOf(readFileSync(RESOLV_CONF, 'utf8'));
  } catch (err) {
    warn(`cannot read ${RESOLV_CONF} (${(err as Error).message}): DNS capture has no name servers to redirect`);
    return [];
  }
}

/**
 * `pilot-agent mesh-iptables` as a service: the capture config from the command's flags and the
 * agent's settings (a setting supplies a flag's value when the flag was not given, as the
 * incumbent's environment defaults do), then a dry run, a cleanup, or applying and validating
 * the rules. Resolved with the flags bound (CaptureFlagsToken).
 */
import { readFileSync } from 'node:fs';
import { inject, injectable } from 'inversify';
import { Logging, LoggingToken, ScopedLogger } from '../logging';
import { Settings, SettingsToken } from '../settings';
import { UserError } from '../shared/user-error';
import { IptablesApplier } from './applier';
import { CaptureConfig, captureConfigFrom, nameServersOf } from './capture-config';
import { captureRules } from './capture-rules';
import { CommandRunner } from './command-runner';
import { dryRunText } from './dry-run';
import { proxyUidOf } from './proxy-user';
import { RuleSet } from './rule-set';
import { validateCapture, VALIDATION_FAILED_EXIT_CODE, ValidationError } from './validation';

export const CaptureFlagsToken = Symbol.for('mesh.iptables.CaptureFlags');

/** The flags of `mesh-iptables` by name, and which of them the command line gave. */
export interface CaptureFlags {
  values: Readonly<Record<string, unknown>> & {
    'proxy-port': string;
    'inbound-capture-port': string;
    'inbound-tunnel-port': string;
    'proxy-uid': string;
    'proxy-gid': string;
    'mesh-inbound-interception-mode': string;
    'mesh-inbound-tproxy-mark': string;
    'mesh-inbound-tproxy-route-table': string;
    'mesh-inbound-ports': string;
    'mesh-local-exclude-ports': string;
    'mesh-outbound-ports': string;
    'mesh-local-outbound-ports-exclude': string;
    'mesh-service-cidr': string;
    'mesh-service-exclude-cidr': string;
    'mesh-exclude-interfaces': string;
    'orch-virt-interfaces': string;
    'network-namespace': string;
    'iptables-probe-port': number;
    'probe-timeout': { milliseconds: number };
    'redirect-dns': boolean;
    'capture-all-dns': boolean;
    'cni-mode': boolean;
    'drop-invalid': boolean;
    'dual-stack': boolean;
    'dry-run': boolean;
    'cleanup-only': boolean;
    'skip-rule-apply': boolean;
    'run-validation': boolean;
    reconcile: boolean;
    'force-apply': boolean;
  };
  given: ReadonlySet<string>;
}

/** Where the resolver configuration is read, for the DNS servers whose traffic --redirect-dns captures. */
const RESOLV_CONF = '/etc/resolv.conf';

@injectable()
export class CaptureJob {
  private readonly log: ScopedLogger;

  constructor(
    @inject(CaptureFlagsToken) private readonly flags: CaptureFlags,
    @inject(SettingsToken) private readonly settings: Settings,
    @inject(LoggingToken) logging: Logging,
  ) {
    this.log = logging.scope('default');
  }

  /** Runs the job; returns the text a dry run prints. A CaptureConfigError is a UserError. */
  async run(): Promise<string | undefined> {
    const f = this.flags.values;
    const config = this.config();
    const rules = captureRules(config);
    if (f['dry-run']) {
      if (f['run-validation']) this.log.info('dry run: validation skipped (it needs the rules applied)');
      return dryRunText(rules, config);
    }
    try {
      await this.apply(rules, config);
    } catch (err) {
      if (err instanceof ValidationError) throw new UserError(err.message, VALIDATION_FAILED_EXIT_CODE);
      // iptables itself failing (missing binary, no permission, drift): the operator's to fix.
      throw err instanceof UserError ? err : new UserError((err as Error).message);
    }
    return undefined;
  }

  private async apply(rules: RuleSet, config: CaptureConfig): Promise<void> {
    const f = this.flags.values;
    const runner = new CommandRunner(f['network-namespace'] || undefined);
    const applier = new IptablesApplier(runner, (message) => this.log.info(message));
    if (f['cleanup-only']) {
      await applier.cleanup(rules, config);
      this.log.info('mesh iptables rules removed');
      return;
    }
    if (f['skip-rule-apply']) {
      this.log.info('--skip-rule-apply: not changing iptables');
    } else {
      const outcome = await applier.apply(rules, config, { reconcile: f.reconcile, forceApply: f['force-apply'] });
      this.log.info(`mesh iptables rules ${outcome}`);
    }
    if (f['run-validation']) {
      await validateCapture(runner, {
        proxyPort: config.proxyPort,
        inboundCapturePort: config.inboundCapturePort,
        probePort: f['iptables-probe-port'],
        timeoutMs: f['probe-timeout'].milliseconds,
        uid: Number(config.proxyUids[0] ?? '1337'),
        gid: Number(config.proxyGids[0] ?? '1337'),
      });
      this.log.info('iptables validation passed: outbound traffic is captured');
    }
  }

  private config(): CaptureConfig {
    const f = this.flags.values;
    const settings = this.settings;
    const given = (name: keyof CaptureFlags['values']) => this.flags.given.has(name);
    const fromSetting = (name: keyof CaptureFlags['values'], flagValue: string, setting: string) => (!given(name) && setting ? setting : flagValue);
    const redirectDns = given('redirect-dns') ? f['redirect-dns'] : settings.bool('MESH_META_DNS_CAPTURE');
    return captureConfigFrom({
      proxyPort: f['proxy-port'],
      inboundCapturePort: f['inbound-capture-port'],
      inboundTunnelPort: f['inbound-tunnel-port'],
      proxyUid: f['proxy-uid'] || proxyUidOf(settings.string('PROXY_USER') || 'mesh-proxy'),
      proxyGid: f['proxy-gid'],
      inboundInterceptionMode: fromSetting('mesh-inbound-interception-mode', f['mesh-inbound-interception-mode'], settings.string('INBOUND_INTERCEPTION_MODE')),
      inboundTproxyMark: fromSetting('mesh-inbound-tproxy-mark', f['mesh-inbound-tproxy-mark'], settings.string('INBOUND_TPROXY_MARK')),
      inboundTproxyRouteTable: f['mesh-inbound-tproxy-route-table'],
      inboundPorts: f['mesh-inbound-ports'],
      localExcludePorts: f['mesh-local-exclude-ports'],
      outboundPorts: f['mesh-outbound-ports'],
      localOutboundPortsExclude: f['mesh-local-outbound-ports-exclude'],
      serviceCidr: f['mesh-service-cidr'],
      serviceExcludeCidr: f['mesh-service-exclude-cidr'],
      excludeInterfaces: f['mesh-exclude-interfaces'],
      orchVirtInterfaces: f['orch-virt-interfaces'],
      ownerGroupsInclude: settings.string('MESH_OUTBOUND_OWNER_GROUPS'),
      ownerGroupsExclude: settings.string('MESH_OUTBOUND_OWNER_GROUPS_EXCLUDE'),
      hostIpv4LoopbackCidr: settings.string('MESH_OUTBOUND_IPV4_LOOPBACK_CIDR'),
      redirectDns,
      // A CNI plug-in cannot see the pod's resolver configuration, so it captures all DNS.
      captureAllDns: f['capture-all-dns'] || f['cni-mode'],
      dnsServers: redirectDns && !f['cni-mode'] ? this.nameServers() : [],
      dropInvalid: f['drop-invalid'],
      dualStack: given('dual-stack') ? f['dual-stack'] : settings.bool('MESH_DUAL_STACK'),
    });
  }

  private nameServers(): string[] {
    try {
      return nameServersOf(readFileSync(RESOLV_CONF, 'utf8'));
    } catch (err) {
      this.log.warn(`cannot read ${RESOLV_CONF} (${(err as Error).message}): DNS capture has no name servers to redirect`);
      return [];
    }
  }
}

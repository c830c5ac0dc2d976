import { boolFlag, command, durationFlag, givenFlags, MeshCommand, stringFlag, uint16Flag } from '../../src/modules/cli';
import { CaptureFlagsToken, CaptureJob } from '../../src/modules/iptables/capture-job';

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

@command({
  program: 'pilot-agent',
  path: 'mesh-iptables',
  summary: 'Set up port forwarding for the sidecar',
  flags: meshIptablesFlags,
})
export class MeshIptables extends MeshCommand {
  async run(): Promise<void> {
    const { flags, metadata } = await this.parse(MeshIptables);
    const text = await this.scope.resolve(CaptureJob, [[CaptureFlagsToken, { values: flags, given: givenFlags(flags, metadata) }]]).run();
    if (text !== undefined) this.write(text);
  }
}

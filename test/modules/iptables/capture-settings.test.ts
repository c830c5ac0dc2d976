import { expect } from 'chai';
import { runCli } from '../../helpers/run-cli';

/** Settings the command reads when the matching flag is absent, and the errors bad values get. */
describe('pilot-agent mesh-iptables: settings and bad input', function () {
  this.timeout(20_000);
  const dryRun = (args: string[], env: Record<string, string> = {}) => runCli('pilot-agent', ['mesh-iptables', '-n', '-u', '1337', ...args], { env });

  it('INBOUND_INTERCEPTION_MODE and INBOUND_TPROXY_MARK apply when -m and -t are not given; flags win', async () => {
    const env = { INBOUND_INTERCEPTION_MODE: 'TPROXY', INBOUND_TPROXY_MARK: '4242' };
    const fromSettings = await dryRun(['-b', '80'], env);
    expect(fromSettings.code).to.equal(0);
    expect(fromSettings.stdout).to.contain('-A MESH_DIVERT -j MARK --set-mark 4242');
    expect(fromSettings.stdout).to.contain('# then: ip -4 rule add fwmark 4242 lookup 133');
    const fromFlags = await dryRun(['-b', '80', '-m', 'REDIRECT'], env);
    expect(fromFlags.stdout).not.to.contain('MESH_DIVERT');
    expect(fromFlags.stdout).to.contain('-A MESH_INBOUND -p tcp --dport 80 -j MESH_IN_REDIRECT');
  });

  it('MESH_OUTBOUND_OWNER_GROUPS limits capture to some groups; _EXCLUDE exempts groups', async () => {
    const only = await dryRun(['-i', '*'], { MESH_OUTBOUND_OWNER_GROUPS: 'app,1001' });
    expect(only.stdout).to.contain('-A MESH_OUTPUT -m owner ! --gid-owner app -m owner ! --gid-owner 1001 -j RETURN');
    const except = await dryRun(['-i', '*'], { MESH_OUTBOUND_OWNER_GROUPS_EXCLUDE: 'backup' });
    expect(except.stdout).to.contain('-A MESH_OUTPUT -m owner --gid-owner backup -j RETURN');
  });

  it('MESH_META_DNS_CAPTURE turns on DNS capture; --cni-mode captures all DNS', async () => {
    const cni = await dryRun(['--cni-mode'], { MESH_META_DNS_CAPTURE: 'true' });
    expect(cni.stdout).to.contain('-A MESH_OUTPUT_DNS -p udp --dport 53 -j REDIRECT --to-port 15053');
    expect(cni.stdout).to.contain('-A MESH_OUTPUT_DNS -p tcp --dport 53 -j REDIRECT --to-ports 15053');
    const off = await dryRun([]);
    expect(off.stdout).not.to.contain('MESH_OUTPUT_DNS');
  });

  it('MESH_OUTBOUND_IPV4_LOOPBACK_CIDR replaces 127.0.0.1/32; MESH_DUAL_STACK adds the IPv6 tables', async () => {
    const result = await dryRun([], { MESH_OUTBOUND_IPV4_LOOPBACK_CIDR: '127.0.0.0/8', MESH_DUAL_STACK: 'true' });
    expect(result.stdout).to.contain('-A MESH_OUTPUT -d 127.0.0.0/8 -j RETURN');
    expect(result.stdout).to.contain('-A MESH_OUTPUT -d ::1/128 -j RETURN');
  });

  it('a loopback range among the captured ones keeps app-to-self traffic captured', async () => {
    const result = await dryRun(['-i', '127.0.0.1/32,10.0.0.0/8']);
    expect(result.stdout).not.to.contain('-A MESH_OUTPUT -o lo -m owner ! --uid-owner 1337 -j RETURN');
    expect(result.stdout).to.contain('-A MESH_OUTPUT -d 10.0.0.0/8 -j MESH_REDIRECT');
  });

  const BAD: [string[], string][] = [
    [['-p', '70000'], '--proxy-port: "70000" is not a port (0-65535)'],
    [['-b', '80,http'], '--mesh-inbound-ports: "http" is not a port (0-65535) or a port range (a:b)'],
    [['-i', '10.0.0.0/8,300.1.1.1'], '--mesh-service-cidr: "300.1.1.1" is not an IP address or CIDR range'],
    [['-x', '*'], '--mesh-service-exclude-cidr: "*" would exclude everything; list ranges instead'],
    [['-g', 'mesh'], '--proxy-gid: "mesh" is not a numeric ID'],
    [['-t', '0x539'], '--mesh-inbound-tproxy-mark: "0x539" is not a non-negative integer'],
    [['-c', 'a-very-long-interface-name'], '--mesh-exclude-interfaces: "a-very-long-interface-name" is not an interface name'],
  ];
  for (const [args, message] of BAD) {
    it(`rejects ${args.join(' ')} naming the flag`, async () => {
      const result = await dryRun(args);
      expect(result.code).to.equal(1);
      expect(result.stdout).to.equal('');
      expect(result.stderr).to.equal(`Error: ${message}\n`);
    });
  }

  it('a bad setting value names the setting', async () => {
    const result = await dryRun([], { MESH_OUTBOUND_IPV4_LOOPBACK_CIDR: 'localhost' });
    expect(result.code).to.equal(1);
    expect(result.stderr).to.equal('Error: MESH_OUTBOUND_IPV4_LOOPBACK_CIDR: "localhost" is not an IP address or CIDR range\n');
  });
});

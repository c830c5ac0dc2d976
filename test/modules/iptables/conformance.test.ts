import { expect } from 'chai';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { captureConfigFrom, CaptureInput, captureRules, dryRunText } from '../../../src/modules/iptables';
import { REPO_ROOT, runCli } from '../../helpers/run-cli';
import { skipWithoutNetns } from './netns';

/*
 * ../shared/conformance/iptables: the incumbent's `--dry-run` transcripts. Only the
 * iptables-restore lines count (`*`, -N, -A, -I, COMMIT), in order. Base settings of every
 * case: proxy UID/GID 1337, owner groups `*`, loopback 127.0.0.1/32 (the defaults).
 */
const FIXTURES = path.join(REPO_ROOT, 'test', 'fixtures', 'conformance', 'iptables');
const BASE = ['-u', '1337', '-g', '1337'];

const CASES: Record<string, string[]> = {
  empty: [],
  'basic-exclude-nic': ['-c', 'not-mesh-nic'],
  'drop-invalid': ['--drop-invalid'],
  'inbound-ports-include': ['-b', '32000,31000'],
  'inbound-ports-wildcard': ['-b', '*'],
  'inbound-ports-tproxy': ['-b', '32000,31000', '-m', 'TPROXY'],
  ipnets: ['-i', '10.0.0.0/8'],
  'kube-virt-interfaces': ['-k', 'eth1,eth2', '-i', '*'],
  'outbound-ports-include': ['-q', '32000,31000'],
  'ipv6-inbound-ports': ['-b', '4000,5000', '--dual-stack'],
};
const TPROXY_FLAGS = ['-m', 'TPROXY', '-b', '*', '-x', '1.1.0.0/16', '-i', '9.9.0.0/16', '--redirect-dns', '-u', '1337', '-g', '1337', '-c', 'not-mesh-nic', '--dual-stack'];

function restoreLines(text: string): string[] {
  return text.split('\n').filter((line) => /^(\*|-N |-A |-I |COMMIT)/.test(line));
}

function golden(name: string): string[] {
  return restoreLines(readFileSync(path.join(FIXTURES, `${name}.golden`), 'utf8'));
}

describe('pilot-agent mesh-iptables --dry-run: conformance cases', function () {
  this.timeout(20_000);

  for (const [name, flags] of Object.entries(CASES)) {
    it(`${name}: ${flags.join(' ') || '(no flags)'}`, async () => {
      const result = await runCli('pilot-agent', ['mesh-iptables', '--dry-run', ...BASE, ...flags]);
      expect(result.stderr).to.equal('');
      expect(result.code).to.equal(0);
      expect(restoreLines(result.stdout)).to.deep.equal(golden(name));
    });
  }

  it('tproxy: DNS capture towards the resolv.conf name server 127.0.0.53 (rule builder)', () => {
    const input: CaptureInput = {
      proxyPort: '15001',
      inboundCapturePort: '15006',
      inboundTunnelPort: '15008',
      proxyUid: '1337',
      proxyGid: '1337',
      inboundInterceptionMode: 'TPROXY',
      inboundTproxyMark: '1337',
      inboundTproxyRouteTable: '133',
      inboundPorts: '*',
      localExcludePorts: '',
      outboundPorts: '',
      localOutboundPortsExclude: '',
      serviceCidr: '9.9.0.0/16',
      serviceExcludeCidr: '1.1.0.0/16',
      excludeInterfaces: 'not-mesh-nic',
      orchVirtInterfaces: '',
      ownerGroupsInclude: '*',
      ownerGroupsExclude: '',
      hostIpv4LoopbackCidr: '127.0.0.1/32',
      redirectDns: true,
      captureAllDns: false,
      dnsServers: ['127.0.0.53'],
      dropInvalid: false,
      dualStack: true,
    };
    const config = captureConfigFrom(input);
    expect(restoreLines(dryRunText(captureRules(config), config))).to.deep.equal(golden('tproxy'));
  });

  it('tproxy: the command reads the name servers from the resolver configuration', async function () {
    skipWithoutNetns(this);
    // `ip netns exec` mounts /etc/netns/<name>/resolv.conf over /etc/resolv.conf for the command.
    const name = `meshcf${process.pid}`;
    const etc = path.join('/etc/netns', name);
    mkdirSync(etc, { recursive: true });
    writeFileSync(path.join(etc, 'resolv.conf'), '# test resolver\nnameserver 127.0.0.53\noptions edns0\n');
    const { execFileSync } = await import('node:child_process');
    try {
      execFileSync('ip', ['netns', 'add', name]);
      const out = execFileSync('ip', ['netns', 'exec', name, process.execPath, path.join(REPO_ROOT, 'bin', 'pilot-agent'), 'mesh-iptables', '--dry-run', ...TPROXY_FLAGS], {
        encoding: 'utf8',
      });
      expect(restoreLines(out)).to.deep.equal(golden('tproxy'));
      expect(out).to.contain('# then: ip -4 rule add fwmark 1337 lookup 133');
    } finally {
      execFileSync('ip', ['netns', 'del', name], { stdio: 'ignore' });
      rmSync(etc, { recursive: true, force: true });
    }
  });
});

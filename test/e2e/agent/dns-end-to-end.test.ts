import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DnsProxyServer, NameTableClient } from '../../../src/modules/agent/dns';
import { agentNode } from '../../../src/modules/agent/node-identity';
import { Settings } from '../../../src/modules/settings';
import { startDaemon } from '../../helpers/daemon';
import { serviceEntryYaml, workloadServiceYaml } from '../../helpers/push';
import { ask, dataOf, resolvConf, startUpstream } from '../../modules/agent/dns-helpers';

const apiEntry = (address: string) =>
  serviceEntryYaml('egress', 'api', 'api.example.com', 'NONE', '{ number: 443, name: tls, protocol: TLS }', `\n  location: MESH_EXTERNAL\n  addresses: [${address}]`);

async function eventually(check: () => Promise<unknown>, timeoutMs = 8000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await check();
      return;
    } catch (e) {
      if (Date.now() > deadline) throw e;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

describe('DNS proxy end to end: the daemon\'s name table through NDS', function () {
  this.timeout(40_000);

  it('resolves a ServiceEntry host to its address, a short name in its namespace, forwards an outside name, and follows changes', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-dns-e2e-'));
    fs.writeFileSync(path.join(dir, 'api.yaml'), apiEntry('240.0.0.10'));
    fs.writeFileSync(path.join(dir, 'echo.yaml'), workloadServiceYaml({ namespace: 'foo', name: 'echo', address: '10.1.0.9', ports: ['{ number: 8000, name: http, protocol: HTTP }'] }));
    const upstream = await startUpstream((q) => (q.name === 'www.outside.test' ? { answers: [{ type: 'A', name: q.name, ttl: 60, class: 'IN', data: '198.51.100.7' }] } : { rcode: 3 }));
    const daemon = await startDaemon(['--configDir', dir]);
    // The node as `pilot-agent proxy` presents it, with MESH_META_DNS_CAPTURE=true.
    const settings = new Settings('pilot-agent', { MESH_META_DNS_CAPTURE: 'true', INSTANCE_IP: '10.9.0.1', POD_NAME: 'app', POD_NAMESPACE: 'foo' });
    const node = agentNode(settings, { domain: '', serviceCluster: 'mesh-proxy', interceptionMode: 'NONE' });
    const logs: string[] = [];
    const dns = new DnsProxyServer({
      address: '127.0.0.1:0',
      resolvConfPath: resolvConf([`nameserver 127.0.0.1:${upstream.port}`]),
      proxyDomain: node.id.split('~')[3],
      log: (level, message) => logs.push(`${level} ${message}`),
    });
    const client = new NameTableClient({ address: `127.0.0.1:${daemon.grpcPort}`, node, onTable: (t) => dns.update(t), log: (level, message) => logs.push(`${level} ${message}`) });
    try {
      const { port } = await dns.start();
      client.start();
      await eventually(async () => expect(dns.ready(), 'a name table arrived').to.equal(true));
      expect(client.connected()).to.equal(true);

      expect(dataOf(await ask(port, 'api.example.com', 'A'), 'A')).to.deep.equal(['240.0.0.10']);
      expect(dataOf(await ask(port, 'api.example.com', 'A', { protocol: 'tcp' }), 'A')).to.deep.equal(['240.0.0.10']);
      expect(dataOf(await ask(port, 'echo', 'A'), 'A')).to.deep.equal(['10.1.0.9']);
      expect(dataOf(await ask(port, 'api.example.com.foo.svc.cluster.local', 'A'), 'A')).to.deep.equal(['240.0.0.10']);
      expect(dataOf(await ask(port, 'www.outside.test', 'A'), 'A')).to.deep.equal(['198.51.100.7']);
      expect(upstream.received.map((r) => r.name)).to.deep.equal(['www.outside.test']);

      // A changed ServiceEntry reaches the DNS proxy through a push.
      const tablesBefore = client.received();
      fs.writeFileSync(path.join(dir, 'api.yaml'), apiEntry('240.0.0.11'));
      await eventually(async () => expect(dataOf(await ask(port, 'api.example.com', 'A'), 'A')).to.deep.equal(['240.0.0.11']));
      expect(client.received()).to.be.greaterThan(tablesBefore);
      // And a removed one stops being a mesh name: it goes upstream.
      fs.rmSync(path.join(dir, 'api.yaml'));
      await eventually(async () => expect((await ask(port, 'api.example.com', 'A')).rcode).to.equal('NXDOMAIN'));
      expect(logs.filter((l) => l.startsWith('warn'))).to.deep.equal([]);
    } finally {
      client.stop();
      await dns.stop();
      await daemon.stop();
      await upstream.stop();
    }
  });
});

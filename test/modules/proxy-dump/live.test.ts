/**
 * Live admin reads: a proxy admin's 5xx or 4xx, an answer that is not JSON, or a JSON answer that
 * is no config dump each end in one line naming the pod, the request and what the proxy said.
 */
import { expect } from 'chai';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { requireSection } from '../../../src/modules/proxy-dump/dump';
import { AdminCall, liveConfigDump } from '../../../src/modules/proxy-dump/live';

describe('reading a live proxy admin', () => {
  let server: http.Server;
  let call: AdminCall;
  const SOURCE = 'pod web-1 in namespace foo';

  before(async () => {
    server = http.createServer((req, res) => {
      if (req.url === '/config_dump?mask=x') return void res.writeHead(503).end('PRE_INITIALIZING\nmore\n');
      if (req.url === '/config_dump?html') return void res.writeHead(200).end('<html>');
      if (req.url === '/config_dump?other') return void res.writeHead(200).end('{"clusters": []}');
      res.writeHead(200).end(JSON.stringify({ configs: [{ '@type': 'type.googleapis.com/envoy.admin.v3.ClustersConfigDump' }] }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    call = (method, path) =>
      new Promise((resolve, reject) => {
        const req = http.request({ host: '127.0.0.1', port, method, path, agent: false }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
        });
        req.on('error', reject);
        req.end();
      });
  });
  after(() => new Promise((r) => server.close(r)));

  const errorOf = (p: Promise<unknown>) => p.then(() => '', (e: Error) => e.message);

  it('names the pod, the request and the first line the proxy answered on a non-2xx status', async () => {
    expect(await errorOf(liveConfigDump(call, '/config_dump?mask=x', SOURCE))).to.equal('the proxy admin of pod web-1 in namespace foo answered 503 to GET /config_dump?mask=x: PRE_INITIALIZING');
  });

  it('names the pod when the answer is not JSON or not a config dump', async () => {
    expect(await errorOf(liveConfigDump(call, '/config_dump?html', SOURCE))).to.match(/^the proxy admin of pod web-1 in namespace foo answered GET \/config_dump\?html with something that is not JSON: /);
    expect(await errorOf(liveConfigDump(call, '/config_dump?other', SOURCE))).to.equal(
      'the proxy admin of pod web-1 in namespace foo answered GET /config_dump?other without a "configs" list: is /config_dump a config dump there?',
    );
  });

  it('gives the renderers a dump whose errors name the pod', async () => {
    const dump = await liveConfigDump(call, '/config_dump', SOURCE);
    expect(await errorOf(Promise.resolve().then(() => requireSection(dump, 'SecretsConfigDump')))).to.equal('config dump of pod web-1 in namespace foo has no SecretsConfigDump section');
  });
});

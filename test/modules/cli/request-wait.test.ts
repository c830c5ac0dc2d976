import { expect } from 'chai';
import * as http from 'node:http';
import { AddressInfo } from 'node:net';
import { runCli } from '../../helpers/run-cli';

/** A stand-in proxy admin / status port on a free loopback port. */
function startServer(handler: http.RequestListener): Promise<{ server: http.Server; port: number }> {
  return new Promise((resolve) => {
    const server = http.createServer(handler);
    server.listen(0, '127.0.0.1', () => resolve({ server, port: (server.address() as AddressInfo).port }));
  });
}

describe('pilot-agent request and wait', () => {
  it('request sends the method, path and body to the admin port and prints the answer', async () => {
    const seen: string[] = [];
    const { server, port } = await startServer((req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        seen.push(`${req.method} ${req.url} ${body}`);
        res.end('{"configs":[]}');
      });
    });
    try {
      const r = await runCli('pilot-agent', ['request', 'POST', 'logging?level=debug', 'x=1', '--debug-port', String(port)]);
      expect(r.code, r.stderr).to.equal(0);
      expect(r.stdout).to.equal('{"configs":[]}');
      expect(seen).to.deep.equal(['POST /logging?level=debug x=1']);
    } finally {
      server.close();
    }
  });

  it('request reports a non-2xx answer with its status and exits 1', async () => {
    const { server, port } = await startServer((_req, res) => {
      res.statusCode = 404;
      res.end('no such admin path');
    });
    try {
      const r = await runCli('pilot-agent', ['request', 'GET', '/nope', '--debug-port', String(port)]);
      expect(r.code).to.equal(1);
      expect(r.stderr).to.match(/status 404: no such admin path/);
    } finally {
      server.close();
    }
  });

  it('wait returns once the status URL answers 200', async () => {
    let calls = 0;
    const { server, port } = await startServer((_req, res) => {
      calls++;
      res.statusCode = calls < 3 ? 503 : 200;
      res.end();
    });
    try {
      const r = await runCli('pilot-agent', ['wait', '--url', `http://127.0.0.1:${port}/healthz/ready`, '--periodMillis', '50']);
      expect(r.code, r.stderr).to.equal(0);
      expect(r.stdout).to.match(/ready/);
      expect(calls).to.equal(3);
    } finally {
      server.close();
    }
  });

  it('wait gives up after --timeoutSeconds with the last error', async () => {
    const { server, port } = await startServer((_req, res) => {
      res.statusCode = 503;
      res.end();
    });
    try {
      const started = Date.now();
      const r = await runCli('pilot-agent', ['wait', '--url', `http://127.0.0.1:${port}/`, '--timeoutSeconds', '1', '--periodMillis', '100']);
      expect(r.code).to.equal(1);
      expect(r.stderr).to.match(/timeout waiting for the proxy.*HTTP status code 503/);
      expect(Date.now() - started).to.be.lessThan(5000);
    } finally {
      server.close();
    }
  });
});

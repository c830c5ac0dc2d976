import { expect } from 'chai';
import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { REPO_ROOT, runCli } from '../../helpers/run-cli';

/**
 * `meshctl ztunnel-config` on a saved ztunnel config dump (`-f`), through the real command:
 * every subcommand, alias, filter and output form. The fixture is a ztunnel `/config_dump` of a
 * two-node cluster (bookstore and checkout namespaces, a waypoint, multi-endpoint services,
 * policies, certificate chains, open connections); the expected tables were written by hand
 * from the reference's rules. The certificate table's VALID CERT holds for any date from
 * 2024-06-01 to 2034-06-01.
 */

const FIXTURES = path.join(REPO_ROOT, 'test', 'fixtures', 'ztunnel-config');
const DUMP = path.join(FIXTURES, 'dump.json');
const expected = (name: string) => fs.readFileSync(path.join(FIXTURES, name), 'utf8');
const fixture = JSON.parse(fs.readFileSync(DUMP, 'utf8'));

async function meshctl(...args: string[]) {
  const r = await runCli('meshctl', ['ztunnel-config', ...args], { timeoutMs: 30_000 });
  return r;
}

/** The command with `input` on its standard input. */
function withStdin(input: string, ...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(REPO_ROOT, 'bin', 'meshctl'), 'ztunnel-config', ...args], { cwd: REPO_ROOT, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(input);
  });
}

async function ok(...args: string[]): Promise<string> {
  const r = await meshctl(...args);
  expect(r.stderr, `stderr of ${args.join(' ')}`).to.equal('');
  expect(r.code, `exit code of ${args.join(' ')}`).to.equal(0);
  return r.stdout;
}

async function failure(...args: string[]): Promise<string> {
  const r = await meshctl(...args);
  expect(r.code, `exit code of ${args.join(' ')}`).to.equal(1);
  expect(r.stdout).to.equal('');
  const lines = r.stderr.trimEnd().split('\n');
  expect(lines, r.stderr).to.have.length(1);
  return lines[0];
}

describe('meshctl ztunnel-config on a saved config dump', function () {
  this.timeout(120_000);

  describe('short tables', () => {
    const cases: [string, string[], string][] = [
      ['all five tables, each after a blank line', ['all', '-f', DUMP], 'all.txt'],
      ['workloads sorted by namespace.name, waypoints named, hostname when no IP', ['workload', '-f', DUMP], 'workloads.txt'],
      ['workloads of a namespace on a node (any letter case)', ['workloads', '-f', DUMP, '--workload-namespace', 'BOOKSTORE', '--workload-node', 'NODE-A'], 'workloads-bookstore-node-a.txt'],
      ['the workload with an address', ['w', '--file', DUMP, '--address', 'FD00:10:40::30'], 'workloads-address.txt'],
      ['services with VIPs and healthy/all endpoints', ['service', '-f', DUMP], 'services.txt'],
      ['services of a namespace', ['svc', '-f', DUMP, '--service-namespace', 'checkout'], 'services-checkout.txt'],
      ['services (alias s)', ['s', '-f', DUMP], 'services.txt'],
      ['policies sorted by namespace and name', ['policy', '-f', DUMP], 'policies.txt'],
      ['policies of a namespace (alias pol)', ['pol', '-f', DUMP, '--policy-namespace', 'bookstore'], 'policies-bookstore.txt'],
      ['policies (alias p)', ['p', '-f', DUMP], 'policies.txt'],
      ['certificates: leaf, intermediate and root rows, NA rows for identities without one', ['certificate', '-f', DUMP], 'certificates.txt'],
      ['certificates (alias certs)', ['certs', '-f', DUMP, '-o', 'short'], 'certificates.txt'],
      ['connections with addresses named', ['connections', '-f', DUMP], 'connections.txt'],
      ['outbound connections with raw addresses', ['cons', '-f', DUMP, '--raw', '--direction', 'outbound'], 'connections-raw-outbound.txt'],
      ['inbound connections of a namespace', ['cons', '-f', DUMP, '--direction', 'inbound', '--workload-namespace', 'checkout'], 'connections-checkout-inbound.txt'],
    ];
    for (const [what, args, file] of cases) {
      it(`${what}: ${args.filter((a) => a !== DUMP).join(' ')}`, async () => {
        expect(await ok(...args)).to.equal(expected(file));
      });
    }

    it('the aliases policies, cert and certificates name the same subcommands', async () => {
      expect(await ok('policies', '-f', DUMP)).to.equal(expected('policies.txt'));
      expect(await ok('cert', '-f', DUMP)).to.equal(expected('certificates.txt'));
      expect(await ok('certificates', '-f', DUMP)).to.equal(expected('certificates.txt'));
    });
  });

  it('--file - reads the dump from standard input', async () => {
    const piped = await withStdin(fs.readFileSync(DUMP, 'utf8'), 'workload', '-f', '-');
    expect(piped).to.deep.equal({ code: 0, stdout: expected('workloads.txt'), stderr: '' });
    const bad = await withStdin('<html>', 'svc', '-f', '-');
    expect(bad.code).to.equal(1);
    expect(bad.stderr).to.match(/^Error: the ztunnel config dump on standard input is not valid JSON: Unexpected token .*\n$/);
  });

  describe('json and yaml: the selected entries as ztunnel wrote them', () => {
    const workload = (name: string) => Object.values(fixture.workloads).find((w) => (w as { name: string }).name === name);
    const service = (ns: string, name: string) => Object.values(fixture.services).find((s) => (s as { namespace: string }).namespace === ns && (s as { name: string }).name === name);

    it('workload -o json: the filtered workloads, sorted as the table', async () => {
      const out = JSON.parse(await ok('workload', '-f', DUMP, '--workload-namespace', 'bookstore', '--workload-node', 'node-a', '-o', 'json'));
      expect(out).to.deep.equal(['catalog-v1-7d9f8c6b5-x2kfp', 'catalog-v2-5c8d7f9b4-m4tlr', 'frontend-58f9c7d6b8-zr5vt'].map(workload));
    });

    it('workload -o yaml with --address', async () => {
      expect(parseYaml(await ok('workload', '-f', DUMP, '--address', '10.40.2.21', '-o', 'yaml'))).to.deep.equal([workload('payments-6f7b8c9d4-p9k2m')]);
    });

    it('service -o json: sorted by namespace and name, all fields kept', async () => {
      const out = JSON.parse(await ok('service', '-f', DUMP, '--service-namespace', 'checkout', '-o', 'json'));
      expect(out).to.deep.equal([service('checkout', 'cart'), service('checkout', 'payments')]);
      expect(out[1].endpoints).to.have.property('Orch//Pod/checkout/payments-6f7b8c9d4-gone1');
    });

    it('policy -o yaml: sorted, rules kept', async () => {
      const out = parseYaml(await ok('policy', '-f', DUMP, '-o', 'yaml'));
      expect(out.map((p: { name: string }) => p.name)).to.deep.equal(['allow-frontend', 'deny-external', 'allow-payments', 'mesh-wide-audit']);
      expect(out[0].rules).to.deep.equal([[[{ serviceAccounts: [{ namespace: 'bookstore', serviceAccount: 'frontend' }] }]]]);
    });

    it('certificate -o json: every identity in dump order', async () => {
      expect(JSON.parse(await ok('certificate', '-f', DUMP, '-o', 'json'))).to.deep.equal(fixture.certificates);
    });

    it('connections -o json: workload states by namespace and name; a direction leaves the other out', async () => {
      const all = JSON.parse(await ok('connections', '-f', DUMP, '-o', 'json'));
      expect(all.map((s: { info: { name: string } }) => s.info.name)).to.deep.equal(['catalog-v1-7d9f8c6b5-x2kfp', 'catalog-v2-5c8d7f9b4-m4tlr', 'frontend-58f9c7d6b8-zr5vt', 'cart-74c8b9d6f5-j7x3q']);
      const cart = fixture.workloadState['0b1c2d3e-4f5a-4b6c-9d7e-8f9a0b1c2d3e'];
      expect(all[3]).to.deep.equal(cart);
      const outbound = parseYaml(await ok('cons', '-f', DUMP, '-o', 'yaml', '--direction', 'outbound', '--workload-namespace', 'checkout'));
      expect(outbound).to.deep.equal([{ ...cart, connections: { outbound: cart.connections.outbound } }]);
    });

    it('all -o json and -o yaml: the whole dump', async () => {
      expect(JSON.parse(await ok('all', '-f', DUMP, '-o', 'json'))).to.deep.equal(fixture);
      expect(parseYaml(await ok('all', '-f', DUMP, '-o', 'yaml'))).to.deep.equal(fixture);
    });
  });

  describe('what it refuses', () => {
    it('a file together with a node or a pod', async () => {
      expect(await failure('workload', '-f', DUMP, '--node', 'node-a')).to.equal('Error: at most one of --file, --node, or pod name must be passed');
      expect(await failure('certificate', 'ztunnel-4kq8z', '-f', DUMP)).to.equal('Error: at most one of --file, --node, or pod name must be passed');
    });

    it('an output format or direction it does not know', async () => {
      const r = await meshctl('workload', '-f', DUMP, '-o', 'table');
      expect(r.code).to.not.equal(0);
      expect(r.stderr).to.match(/table/);
      const d = await meshctl('cons', '-f', DUMP, '--direction', 'sideways');
      expect(d.code).to.not.equal(0);
      expect(d.stderr).to.match(/sideways/);
    });
  });

  describe('hostile input', () => {
    let dir: string;
    before(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ztunnel-config-'))));
    after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const write = (name: string, content: string) => {
      const file = path.join(dir, name);
      fs.writeFileSync(file, content);
      return file;
    };

    it('a missing file', async () => {
      const file = path.join(dir, 'absent.json');
      expect(await failure('workload', '-f', file)).to.equal(`Error: cannot read ztunnel config dump ${file}: no such file`);
    });

    it('a file over the size limit, without reading it', async () => {
      const file = path.join(dir, 'huge.json');
      fs.writeFileSync(file, '');
      fs.truncateSync(file, 200 * 1024 * 1024);
      const started = Date.now();
      expect(await failure('all', '-f', file)).to.equal(`Error: cannot read ztunnel config dump ${file}: it is ${200 * 1024 * 1024} bytes, more than the limit of ${128 * 1024 * 1024}`);
      expect(Date.now() - started).to.be.below(10_000);
    });

    it('a FIFO, without waiting for a writer', async () => {
      const fifo = path.join(dir, 'pipe.json');
      execFileSync('mkfifo', [fifo]);
      expect(await failure('service', '-f', fifo)).to.equal(`Error: cannot read ztunnel config dump ${fifo}: it is a FIFO (named pipe), not a regular file`);
    });

    it('a directory', async () => {
      expect(await failure('service', '-f', dir)).to.equal(`Error: cannot read ztunnel config dump ${dir}: it is a directory, not a regular file`);
    });

    it('text that is not JSON', async () => {
      const text = write('text.json', 'workloads: {}\n');
      expect(await failure('workload', '-f', text)).to.match(new RegExp(`^Error: ztunnel config dump ${text} is not valid JSON: Unexpected token`));
    });

    it('JSON nested millions deep inside an entry: tables print, JSON output prints or refuses in one line', async () => {
      const depth = 1_000_000;
      const file = write('deep.json', `{"policies":[{"name":"deep","namespace":"ns","action":"Deny","scope":"Global","rules":${'['.repeat(depth)}${']'.repeat(depth)}}]}`);
      expect(await ok('policy', '-f', file)).to.equal('NAMESPACE POLICY NAME ACTION SCOPE\nns        deep        Deny   Global\n');
      for (const output of ['json', 'yaml']) {
        const r = await meshctl('policy', '-f', file, '-o', output);
        if (r.code === 0) expect(r.stdout.length).to.be.above(depth);
        else expect(r.stderr).to.equal(`Error: cannot print the config dump as ${output}: it is nested too deeply\n`);
      }
    });

    it('a JSON value that is not a dump', async () => {
      const array = write('array.json', '[1, 2]');
      expect(await failure('all', '-f', array)).to.equal(
        `Error: ztunnel config dump ${array}: the dump is a list, expected an object with "workloads", "services", "policies" and "certificates": is it a ztunnel /config_dump?`,
      );
    });

    // Every field check is in dump.test.ts; these go through the command.
    const wrongTypes: [string, unknown, string, string][] = [
      ['workloads is a number', { workloads: 5 }, 'workload', 'workloads is a number (5), expected an object or a list'],
      ['a workload name is a number', { workloads: { '/10.0.0.1': { name: 7 } } }, 'workload', 'workloads["/10.0.0.1"].name is a number (7), expected a string'],
      ['a certificate serial is a number', { certificates: [{ identity: 'i', certChain: [{ serialNumber: 12 }] }] }, 'certificate', 'certificates[0].certChain[0].serialNumber is a number (12), expected a string'],
    ];
    for (const [what, dump, subcommand, message] of wrongTypes) {
      it(`wrong types: ${what}`, async () => {
        const file = write(`${subcommand}-${what.replace(/\W+/g, '-')}.json`, JSON.stringify(dump));
        expect(await failure(subcommand, '-f', file)).to.equal(`Error: ztunnel config dump ${file}: ${message}`);
      });
    }

    it('an empty dump prints the headers only', async () => {
      const file = write('empty.json', '{}');
      expect(await ok('workload', '-f', file)).to.equal('NAMESPACE POD NAME ADDRESS NODE WAYPOINT PROTOCOL\n');
      expect(await ok('connections', '-f', file, '-o', 'json')).to.equal('[]\n');
    });
  });
});

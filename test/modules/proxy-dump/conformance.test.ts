import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse } from 'yaml';
import { REPO_ROOT, runCli } from '../../helpers/run-cli';
import { startSynczServer, SynczServer } from '../../helpers/syncz-server';
import { statusTable } from '../../../src/modules/meshd-debug';

/**
 * Every case of the reference's proxy-config set (test/fixtures/proxy-config, copied from
 * shared/conformance/proxy-config) with input files, through the real `meshctl`: text compared
 * exactly, json and yaml as parsed data.
 */

const FIXTURES = path.join(REPO_ROOT, 'test', 'fixtures', 'proxy-config');

interface Case {
  case: string;
  command: string;
  inputs?: string[];
  responses?: string;
  expected: string;
}

/**
 * The `eds` rows of the reference are sorted by service FQDN as they were named before the set
 * was renamed (`istio-ingressgateway`, `istiod` came before `kube-dns`); renaming kept that
 * order, so no sort of the renamed names gives it. For these cases the order is checked by
 * `isSortedByServiceThenPort` instead, and the rows as an exact multiset.
 */
const RENAME_REORDERED = new Set(['eds-short', 'eds-json']);

function isStructured(expected: string): 'json' | 'yaml' | undefined {
  if (expected.endsWith('.json')) return 'json';
  if (expected.endsWith('.yaml')) return 'yaml';
  return undefined;
}

/** JSON with keys sorted, so that equal data gives equal text. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (typeof v === 'object' && v !== null) return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`).join(',')}}`;
  return JSON.stringify(v);
}

const sortedJson = (items: unknown[]) => items.map(canonical).sort();

/** FQDN then port of the `outbound|port||fqdn` names, in the order given. */
function isSortedByServiceThenPort(clusters: string[]): boolean {
  const key = (name: string) => {
    const parts = name.split('|');
    return parts.length === 4 ? { fqdn: parts[3], port: Number(parts[1]) } : { fqdn: name, port: 0 };
  };
  return clusters.every((c, i) => {
    if (i === 0) return true;
    const a = key(clusters[i - 1]);
    const b = key(c);
    return a.fqdn < b.fqdn || (a.fqdn === b.fqdn && a.port <= b.port);
  });
}

/**
 * One `proxy-status` case: one real gRPC ADS server per control-plane instance of the
 * `responses` file, each answering the syncz request with that instance's response, and the
 * real `meshctl proxy-status --xds-address <server> --plaintext` run against them.
 *
 * The spec gives the XDS-connection group a single `--xds-address` and no way to ask several
 * control planes at once (the incumbent asks every daemon pod it finds through the
 * orchestrator, which is out of scope here). So a case with several instances runs the
 * command once per instance: each run must print the header and exactly that instance's rows
 * as the expected table has them (cells compared), and the expected table itself, laid out
 * over all instances, must be what the command's table writer gives for the responses the
 * runs received (`-o json`), compared exactly.
 */
async function runProxyStatusCase(c: Case): Promise<void> {
  const responses = JSON.parse(fs.readFileSync(path.join(FIXTURES, c.responses!), 'utf8')) as Record<string, Record<string, unknown>>;
  const servers: Array<{ instance: string; server: SynczServer }> = [];
  try {
    for (const [instance, response] of Object.entries(responses)) servers.push({ instance, server: await startSynczServer(response) });
    const args = c.command.split(' ').slice(2);
    const expectedText = fs.readFileSync(path.join(FIXTURES, c.expected), 'utf8');
    const format = isStructured(c.expected);
    const run = async (port: number, extra: string[] = []) => {
      const result = await runCli('meshctl', ['proxy-status', ...args, ...extra, '--xds-address', `127.0.0.1:${port}`, '--plaintext']);
      expect(result.stderr, 'stderr').to.equal('');
      expect(result.code, 'exit code').to.equal(0);
      return result.stdout;
    };
    const outputs: string[] = [];
    for (const { server } of servers) {
      outputs.push(await run(server.port));
      // The command asked for the debug type only, on an ADS stream, as a node of its own.
      expect(server.requests.map((r) => r.type_url)).to.deep.equal(['mesh.io/debug/syncz']);
      expect(server.requests[0].node?.id).to.be.a('string').and.not.equal('');
    }
    if (format) {
      expect(servers, 'one instance in a structured case').to.have.length(1);
      const got = format === 'json' ? JSON.parse(outputs[0]) : parse(outputs[0]);
      expect(got).to.deep.equal(format === 'json' ? JSON.parse(expectedText) : parse(expectedText));
      return;
    }
    if (servers.length === 1) {
      expect(outputs[0]).to.equal(expectedText);
      return;
    }
    const [wantHeader, ...wantRows] = expectedText.trimEnd().split('\n');
    const received: Record<string, unknown>[] = [];
    for (const [i, { instance, server }] of servers.entries()) {
      const [header, ...rows] = outputs[i].trimEnd().split('\n');
      expect(header.split(/ {2,}/)).to.deep.equal(wantHeader.split(/ {2,}/));
      const want = wantRows.map((r) => r.split(/ {2,}/)).filter((cells) => cells[2] === instance);
      expect(want, `rows of ${instance}`).to.not.be.empty;
      expect(rows.map((r) => r.split(/ {2,}/))).to.deep.equal(want);
      received.push(JSON.parse(await run(server.port, ['-o', 'json'])));
    }
    expect(statusTable(received as never)).to.equal(expectedText);
  } finally {
    await Promise.all(servers.map((s) => s.server.stop()));
  }
}

describe('meshctl proxy-config and authz check: the reference cases on saved dumps', function () {
  this.timeout(60_000);
  const cases = parse(fs.readFileSync(path.join(FIXTURES, 'cases.yaml'), 'utf8')) as Case[];

  it('has every case of the set', () => {
    expect(cases.length).to.equal(17);
  });

  for (const c of cases) {
    if (c.responses) {
      // proxy-status reads the daemons' xDS status (debug) answers: served by test ADS servers.
      it(`${c.case}`, () => runProxyStatusCase(c));
      continue;
    }
    it(`${c.case}`, async () => {
      const args = c.command.split(' ').slice(1);
      const result = await runCli('meshctl', args, { cwd: FIXTURES });
      expect(result.stderr, 'stderr').to.equal('');
      expect(result.code, 'exit code').to.equal(0);
      const expectedText = fs.readFileSync(path.join(FIXTURES, c.expected), 'utf8');
      const format = isStructured(c.expected);
      if (format) {
        const got = format === 'json' ? JSON.parse(result.stdout) : parse(result.stdout);
        const want = format === 'json' ? JSON.parse(expectedText) : parse(expectedText);
        if (RENAME_REORDERED.has(c.case)) {
          expect(sortedJson(got)).to.deep.equal(sortedJson(want));
          expect(isSortedByServiceThenPort((got as { clusterName: string }[]).map((x) => x.clusterName))).to.equal(true);
        } else {
          expect(got).to.deep.equal(want);
        }
      } else if (RENAME_REORDERED.has(c.case)) {
        const [gotHeader, ...gotRows] = result.stdout.trimEnd().split('\n');
        const [wantHeader, ...wantRows] = expectedText.trimEnd().split('\n');
        expect(gotHeader).to.equal(wantHeader);
        expect([...gotRows].sort()).to.deep.equal([...wantRows].sort());
        expect(isSortedByServiceThenPort(gotRows.map((r) => r.split(/ +/).pop()!))).to.equal(true);
      } else {
        expect(result.stdout).to.equal(expectedText);
      }
    });
  }
});

describe('meshctl proxy-config -f: errors on the dump', function () {
  this.timeout(60_000);
  const dir = fs.mkdtempSync(path.join(require('node:os').tmpdir(), 'mesh-pcf-'));
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  async function expectOneLineError(args: string[], ...fragments: string[]) {
    const result = await runCli('meshctl', args);
    expect(result.code).to.not.equal(0);
    expect(result.stdout).to.equal('');
    const lines = result.stderr.trimEnd().split('\n');
    expect(lines, result.stderr).to.have.length(1);
    for (const f of fragments) expect(lines[0]).to.contain(f);
  }

  it('names a missing file', async () => {
    const file = path.join(dir, 'absent.json');
    await expectOneLineError(['proxy-config', 'routes', '-f', file], file, 'no such file');
  });

  it('names a file that is not JSON', async () => {
    const file = path.join(dir, 'not-json.json');
    fs.writeFileSync(file, 'configs: [\n');
    await expectOneLineError(['proxy-config', 'secret', '-f', file], file, 'not valid JSON');
  });

  it('names a dump without the section the subcommand needs', async () => {
    await expectOneLineError(['proxy-config', 'secret', '-f', path.join(FIXTURES, 'configdump.json')], 'configdump.json', 'SecretsConfigDump');
    await expectOneLineError(['experimental', 'authz', 'check', '-f', path.join(FIXTURES, 'configdump.json')], 'configdump.json', 'ListenersConfigDump');
  });

  it('needs a pod name or -f, not both', async () => {
    await expectOneLineError(['proxy-config', 'ecds'], 'ecds requires pod name or --file parameter');
    await expectOneLineError(['proxy-config', 'ecds', 'httpbin-1234', '-f', path.join(FIXTURES, 'configdump.json')], 'ecds takes a pod name or --file, not both');
  });
});

import { expect } from 'chai';
import { ChildProcess, spawn } from 'node:child_process';
import * as net from 'node:net';
import { runCli } from '../../helpers/run-cli';
import { skipWithoutNetns, TestNetns } from './netns';

/*
 * `pilot-agent mesh-iptables` applying real rules inside a network namespace the test creates:
 * traffic leaving the namespace lands on the proxy port, traffic entering it lands on the
 * inbound capture port, and cleanup leaves no mesh chain behind.
 */

/** Listens, inside the namespace, where captured traffic arrives and says which port took it. */
const CAPTURE_SERVER = `
const net = require('node:net');
let ready = 0;
for (const [port, name] of [[15001, 'outbound'], [15006, 'inbound']]) {
  net.createServer((s) => s.end(name)).listen(port, '0.0.0.0', () => { if (++ready === 2) console.log('ready'); });
}`;

/** Connects, from inside the namespace, to an address outside it, and prints who answered. */
const OUTSIDE_CLIENT = `
const net = require('node:net');
const s = net.connect(Number(process.argv[2]), process.argv[1]);
let got = '';
s.on('data', (d) => (got += d));
s.on('end', () => { console.log(got); process.exit(0); });
s.on('error', (e) => { console.log('error ' + e.code); process.exit(0); });
setTimeout(() => { console.log('timeout'); process.exit(0); }, 2000);`;

function answerFrom(host: string, port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect(port, host);
    let got = '';
    socket.setTimeout(2000, () => {
      socket.destroy();
      resolve('timeout');
    });
    socket.on('data', (d) => (got += d));
    socket.on('end', () => resolve(got));
    socket.on('error', (err: NodeJS.ErrnoException) => resolve(`error ${err.code}`));
  });
}

describe('pilot-agent mesh-iptables: applying rules in a network namespace', function () {
  this.timeout(60_000);
  let ns: TestNetns;
  let server: ChildProcess | undefined;
  const iptables = (...args: string[]) => runCli('pilot-agent', ['mesh-iptables', '--network-namespace', ns.name, '-u', '1337', '-g', '1337', ...args]);

  before(function () {
    skipWithoutNetns(this);
  });

  beforeEach(() => {
    ns = new TestNetns(`meshipt${process.pid % 10000}`, 100 + (process.pid % 50)).create();
  });

  afterEach(() => {
    server?.kill();
    server = undefined;
    ns?.destroy();
  });

  async function startCaptureServer(): Promise<void> {
    server = spawn('ip', ['netns', 'exec', ns.name, process.execPath, '-e', CAPTURE_SERVER], { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((resolve, reject) => {
      server!.stdout!.on('data', (d) => String(d).includes('ready') && resolve());
      server!.on('exit', (code) => reject(new Error(`capture server exited with ${code}`)));
    });
  }

  it('REDIRECT: outbound lands on the proxy port, inbound on the capture port; cleanup removes every mesh chain', async () => {
    ns.exec('iptables', '-t', 'nat', '-A', 'OUTPUT', '-p', 'udp', '--dport', '9', '-j', 'ACCEPT'); // someone else's rule
    const applied = await iptables('-i', '*', '-b', '*', '--log_output_level', 'default:info');
    expect(applied.stderr).to.equal('');
    expect(applied.code).to.equal(0);
    expect(applied.stdout).to.contain('mesh iptables rules applied');
    expect(ns.exec('iptables-save', '-t', 'nat')).to.contain(':MESH_OUTPUT').and.contain('-A OUTPUT -j MESH_OUTPUT');

    await startCaptureServer();
    expect(ns.exec(process.execPath, '-e', OUTSIDE_CLIENT, '203.0.113.7', '8080').trim()).to.equal('outbound');
    expect(await answerFrom(ns.address, 8080)).to.equal('inbound');

    const cleaned = await iptables('-i', '*', '-b', '*', '--cleanup-only');
    expect(cleaned.code).to.equal(0);
    const after = ns.exec('iptables-save');
    expect(after).not.to.contain('MESH_');
    expect(after).to.contain('-A OUTPUT -p udp -m udp --dport 9 -j ACCEPT');
    expect(ns.exec(process.execPath, '-e', OUTSIDE_CLIENT, '203.0.113.7', '8080').trim()).not.to.equal('outbound');
  });

  it('the same rules again change nothing; different rules fail unless --reconcile; --force-apply re-applies', async () => {
    expect((await iptables('-i', '*')).code).to.equal(0);
    const again = await iptables('-i', '*', '--log_output_level', 'default:info');
    expect(again.code).to.equal(0);
    expect(again.stdout).to.contain('already in place');

    const before = ns.exec('iptables-save', '-t', 'nat');
    const drift = await iptables('-i', '10.0.0.0/8');
    expect(drift.code).to.equal(1);
    expect(drift.stderr).to.match(/existing mesh rules differ from the requested ones .*--reconcile/);
    expect(ns.exec('iptables-save', '-t', 'nat').replace(/^#.*\n/gm, '')).to.equal(before.replace(/^#.*\n/gm, ''));

    const reconciled = await iptables('-i', '10.0.0.0/8', '--reconcile');
    expect(reconciled.code).to.equal(0);
    const nat = ns.exec('iptables-save', '-t', 'nat');
    expect(nat).to.contain('-A MESH_OUTPUT -d 10.0.0.0/8 -j MESH_REDIRECT');
    expect(nat).not.to.contain('-A MESH_OUTPUT -j MESH_REDIRECT');
    expect(nat.match(/-A OUTPUT -j MESH_OUTPUT/g)).to.have.length(1);

    const forced = await iptables('-i', '10.0.0.0/8', '--force-apply', '--log_output_level', 'default:info');
    expect(forced.code).to.equal(0);
    expect(forced.stdout).to.contain('re-applying');
    expect(ns.exec('iptables-save', '-t', 'nat').match(/-A OUTPUT -j MESH_OUTPUT/g)).to.have.length(1);
  });

  it('--run-validation passes once rules are in place and fails with exit code 126 when they are not', async () => {
    const missing = await iptables('-i', '*', '--skip-rule-apply', '--run-validation', '--probe-timeout', '1s');
    expect(missing.code).to.equal(126);
    expect(missing.stderr).to.match(/iptables validation failed: a connection to 127\.0\.0\.6:15002 was not redirected/);

    const validated = await iptables('-i', '*', '--run-validation', '--log_output_level', 'default:info');
    expect(validated.stderr).to.equal('');
    expect(validated.code).to.equal(0);
    expect(validated.stdout).to.contain('iptables validation passed');
  });

  it('TPROXY, dual stack: mangle rules and the policy route for both families, all removed by cleanup', async () => {
    const flags = ['-m', 'TPROXY', '-b', '*', '-i', '*', '--dual-stack'];
    const applied = await iptables(...flags);
    expect(applied.stderr).to.equal('');
    expect(applied.code).to.equal(0);
    expect(ns.exec('iptables-save', '-t', 'mangle')).to.contain('-j TPROXY --on-port 15006 --on-ip 0.0.0.0 --tproxy-mark 0x539/0xffffffff');
    expect(ns.exec('ip6tables-save', '-t', 'mangle')).to.contain(':MESH_TPROXY');
    expect(ns.exec('ip', '-4', 'rule')).to.match(/fwmark 0x539 lookup 133/);
    expect(ns.exec('ip', '-6', 'rule')).to.match(/fwmark 0x539 lookup 133/);

    expect((await iptables(...flags, '--cleanup-only')).code).to.equal(0);
    expect(ns.exec('iptables-save')).not.to.contain('MESH_');
    expect(ns.exec('ip6tables-save')).not.to.contain('MESH_');
    expect(ns.exec('iptables-save', '-t', 'mangle')).not.to.match(/^-A /m);
    expect(ns.exec('ip', '-4', 'rule')).not.to.match(/fwmark/);
  });
});

import { expect } from 'chai';
import { runCli } from '../../helpers/run-cli';

describe('running commands as a user types them', () => {
  it('a command parses and checks its flags before reaching for the orchestrator', async () => {
    const r = await runCli('meshctl', ['waypoint', 'delete', 'wp-1', '--revision', 'canary', '-n', 'default']);
    expect(r.code).to.equal(1);
    expect(r.stdout).to.equal('');
    expect(r.stderr).to.equal('Error: waypoint delete: give names or --revision, not both\n');
  });

  it('names the canonical command whatever alias was typed', async () => {
    const r = await runCli('meshctl', ['tag', 'show', '--help']);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.contain('$ meshctl tag list ');
    // The alias reaches `experimental authz check`, whose usage line names it.
    const authz = await runCli('meshctl', ['authz', 'check']);
    expect([authz.code, authz.stderr]).to.deep.equal([1, 'Error: check requires pod name or --file parameter\n']);
  });

  it('takes global flags before the command words', async () => {
    // No orchestrator config here: the command got as far as reaching for the API with them.
    const r = await runCli('meshctl', ['-n', 'foo', '--context', 'kind', 'proxy-config', 'c', 'pod-1']);
    expect(r.code).to.equal(1);
    expect(r.stdout).to.equal('');
    expect(r.stderr).to.match(/^Error: /).and.not.match(/Nonexistent|requires pod name/);
    expect(r.stderr.trim().split('\n')).to.have.length(1);
  });

  it('rejects a bad flag value before saying anything else', async () => {
    const r = await runCli('meshctl', ['x', 'metrics', 'productpage', '-d', 'soon']);
    expect(r.code).to.equal(1);
    expect(r.stderr).to.match(/^Error: .*duration/);
    const unknown = await runCli('meshctl', ['proxy-status', '--no-such-flag']);
    expect(unknown.code).to.equal(1);
    expect(unknown.stderr).to.match(/no-such-flag/);
  });

  it('a group alone prints its help and exits 0; an unknown subcommand is an error', async () => {
    const help = await runCli('meshctl', ['tag']);
    expect(help.code, help.stderr).to.equal(0);
    expect(help.stdout).to.match(/tag generate/).and.match(/tag list/);
    const bad = await runCli('meshctl', ['tag', 'bogus']);
    expect(bad.code).to.equal(1);
    expect(bad.stderr).to.equal('Error: unknown command "bogus" for "meshctl tag"\n');
    const top = await runCli('meshctl', ['bogus']);
    expect(top.code).to.equal(1);
    expect(top.stderr).to.equal('Error: unknown command "bogus" for "meshctl"\n');
  });

  it('--help shows a command with its flags, defaults and aliases', async () => {
    const r = await runCli('meshctl', ['proxy-config', 'c', '--help']);
    expect(r.code).to.equal(0);
    expect(r.stdout).to.match(/--proxy-admin-port/).and.match(/default: 15000/).and.match(/proxy-config clusters/);
  });

  it('the other programs behave the same way', async () => {
    const discovery = await runCli('pilot-discovery', ['discovery', '--configDir', 'no/such/dir', '--log_output_level', 'ads:debug', '--grpcAddr', '127.0.0.1:0', '--httpAddr', '127.0.0.1:0', '--monitoringAddr', '127.0.0.1:0']);
    expect(discovery.code).to.equal(1);
    expect(discovery.stderr).to.match(/^Error: --configDir: config directory no\/such\/dir does not exist\n$/);
    // install-cni is implemented: outside a cluster, with no ORCHCONFIG, it stops with one line.
    const cni = await runCli('install-cni', ['--repair-enabled=false']);
    expect(cni.code).to.equal(1);
    expect(cni.stderr).to.match(/^Error: ORCHCONFIG is not set; in-cluster orchestrator config .*\n$/);
    const iptables = await runCli('pilot-agent', ['mesh-iptables', '-b', '*', '-m', 'TPROXY-ISH', '--dry-run']);
    expect(iptables.code).to.equal(1);
    expect(iptables.stderr).to.equal('Error: --mesh-inbound-interception-mode: "TPROXY-ISH" is not REDIRECT or TPROXY\n');
  });

  it('meshctl options lists the global flags; experimental config list prints the catalogue', async () => {
    const options = await runCli('meshctl', ['options']);
    expect(options.code).to.equal(0);
    expect(options.stdout).to.match(/-i, --meshNamespace='mesh-system'/).and.match(/--as-group=\[\]/).and.match(/-c, --orchconfig=''/);
    const list = await runCli('meshctl', ['experimental', 'config', 'list']);
    expect(list.code).to.equal(0);
    const lines = list.stdout.trim().split('\n');
    expect(lines[0]).to.match(/^NAME\s+TYPE\s+DEFAULT\s+MEANING$/);
    expect(lines.find((l) => l.startsWith('PILOT_DEBOUNCE_AFTER '))).to.match(/PILOT_DEBOUNCE_AFTER\s+D\s+100ms\s+minimum quiet delay/);
    const yaml = await runCli('meshctl', ['x', 'config', 'list', '-o', 'yaml']);
    expect(yaml.stdout).to.match(/- name: CA_SELF_SIGNED_CA_CERT_TTL\n {2}type: D\n {2}default: 87600h0m0s/);
  });
});

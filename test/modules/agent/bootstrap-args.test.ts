import { expect } from 'chai';
import { BootstrapError, envoyArgs, EnvoyArgsOptions, parseProxyLogLevel } from '../../../src/modules/agent/bootstrap';

const base: EnvoyArgsOptions = {
  bootstrapFile: 'etc/mesh/proxy/envoy-rev.json',
  drainDuration: '45s',
  ipFamily: 'v4',
  proxyLogLevel: 'warning',
  concurrency: 0,
};

/** The value following `flag` in argv (undefined when the flag is absent). */
function valueOf(args: string[], flag: string): string | undefined {
  const i = args.indexOf(flag);
  return i < 0 ? undefined : args[i + 1];
}

function errorOf(run: () => unknown): string {
  try {
    run();
  } catch (e) {
    expect(e).to.be.instanceOf(BootstrapError);
    return (e as Error).message;
  }
  throw new Error('expected a BootstrapError');
}

describe('agent: the Envoy command line', () => {
  it('starts Envoy on the bootstrap file with the drain time, address family, log format and levels', () => {
    const args = envoyArgs({ ...base, proxyLogLevel: 'info,misc:error,upstream:debug', concurrency: 2 });
    expect(args).to.deep.equal([
      '-c', 'etc/mesh/proxy/envoy-rev.json',
      '--drain-time-s', '45',
      '--drain-strategy', 'immediate',
      '--local-address-ip-version', 'v4',
      '--file-flush-interval-msec', '1000',
      '--disable-hot-restart',
      '--log-format', '%Y-%m-%dT%T.%fZ\t%l\tenvoy %n %g:%#\t%v\tthread=%t',
      '-l', 'info',
      '--component-log-level', 'misc:error,upstream:debug',
      '--concurrency', '2',
    ]);
  });

  it('leaves --concurrency to Envoy when it is 0, unless MESH_CPU_LIMIT gives a limit (rounded up)', () => {
    expect(envoyArgs(base)).to.not.include('--concurrency');
    expect(valueOf(envoyArgs({ ...base, cpuLimit: 3 }), '--concurrency')).to.equal('3');
    expect(valueOf(envoyArgs({ ...base, cpuLimit: 1.2 }), '--concurrency')).to.equal('2');
    expect(valueOf(envoyArgs({ ...base, concurrency: 4, cpuLimit: 8 }), '--concurrency'), 'the flag wins').to.equal('4');
    expect(errorOf(() => envoyArgs({ ...base, concurrency: -1 }))).to.equal('--concurrency -1: must be 0 (chosen for you) or a positive number of worker threads');
  });

  it('follows the drain duration, the address family, JSON logs and PROXY_SKIP_DEPRECATED_LOGS', () => {
    const args = envoyArgs({ ...base, drainDuration: '1m30s', ipFamily: 'v6', logAsJson: true, skipDeprecatedLogs: true });
    expect(valueOf(args, '--drain-time-s')).to.equal('90');
    expect(valueOf(args, '--local-address-ip-version')).to.equal('v6');
    expect(JSON.parse(valueOf(args, '--log-format')!.replace('%t}', '0}'))).to.include({ level: '%l', msg: '%j' });
    expect(args).to.include('--skip-deprecated-logs');
    expect(envoyArgs(base)).to.not.include('--skip-deprecated-logs');
    expect(errorOf(() => envoyArgs({ ...base, drainDuration: 'soon' }))).to.contain('ProxyConfig drainDuration "soon": not a duration');
  });

  it('reads --proxyLogLevel as a level and <component>:<level> pairs, and the deprecated --proxyComponentLogLevel after it', () => {
    expect(parseProxyLogLevel('debug')).to.deep.equal({ level: 'debug', components: [] });
    expect(parseProxyLogLevel('')).to.deep.equal({ level: 'warning', components: [] });
    expect(parseProxyLogLevel('misc:error')).to.deep.equal({ level: 'warning', components: [['misc', 'error']] });
    expect(parseProxyLogLevel('WARN, upstream:trace')).to.deep.equal({ level: 'warning', components: [['upstream', 'trace']] });
    expect(parseProxyLogLevel('info,misc:error', 'misc:off,http:debug')).to.deep.equal({ level: 'info', components: [['misc', 'off'], ['http', 'debug']] });
    const args = envoyArgs({ ...base, proxyLogLevel: 'off', proxyComponentLogLevel: 'rbac:debug' });
    expect(valueOf(args, '-l')).to.equal('off');
    expect(valueOf(args, '--component-log-level')).to.equal('rbac:debug');
    expect(envoyArgs(base)).to.not.include('--component-log-level');
  });

  it('refuses an unknown level or a malformed entry, naming the flag', () => {
    expect(errorOf(() => envoyArgs({ ...base, proxyLogLevel: 'verbose' }))).to.equal(
      '--proxyLogLevel "verbose": unknown log level "verbose"; use one of trace, debug, info, warning, error, critical, off',
    );
    expect(errorOf(() => parseProxyLogLevel('info,misc:loud'))).to.equal('--proxyLogLevel "info,misc:loud": unknown log level "loud"; use one of trace, debug, info, warning, error, critical, off');
    expect(errorOf(() => parseProxyLogLevel('info,debug'))).to.contain('--proxyLogLevel "info,debug": more than one overall level');
    expect(errorOf(() => parseProxyLogLevel('info,Bad-Name:debug'))).to.contain('"Bad-Name" is not an Envoy logger name');
    expect(errorOf(() => parseProxyLogLevel('info', 'debug'))).to.equal('--proxyComponentLogLevel "debug": "debug" is not <component>:<level>');
  });
});

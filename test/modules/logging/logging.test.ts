import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Logging, LoggingOptionError, parseLoggingOptions, PROGRAM_SCOPES, SCOPE_DESCRIPTIONS, UnknownScopeError } from '../../../src/modules/logging';
import { runCli } from '../../helpers/run-cli';

function tempLog(): string {
  return path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-log-')), 'out.log');
}

const FIXED = new Date('2026-11-21T10:20:30.123Z');

describe('logging', () => {
  it('filters by --log_output_level per scope', () => {
    const file = tempLog();
    const logging = new Logging('pilot-discovery', () => FIXED);
    logging.configure(parseLoggingOptions('pilot-discovery', { log_output_level: 'ads:debug,ca:error', log_target: [file] }));
    logging.scope('ads').debug('ads debug shown');
    logging.scope('ca').warn('ca warn hidden');
    logging.scope('ca').error('ca error shown');
    logging.scope('xds-other').debug('other debug hidden (default info)');
    logging.scope('default').info('default info shown');
    logging.close();
    const lines = fs.readFileSync(file, 'utf8').trim().split('\n');
    expect(lines).to.deep.equal([
      '2026-11-21T10:20:30.123000Z\tdebug\tads\tads debug shown',
      '2026-11-21T10:20:30.123000Z\terror\tca\tca error shown',
      '2026-11-21T10:20:30.123000Z\tinfo\tdefault info shown',
    ]);
  });

  it('sets every scope with all:<level> and silences with none', () => {
    const file = tempLog();
    const logging = new Logging('pilot-agent', () => FIXED);
    logging.configure(parseLoggingOptions('pilot-agent', { log_output_level: 'all:warn,sds:none', log_target: [file] }));
    logging.scope('dns').info('hidden');
    logging.scope('dns').warn('shown');
    logging.scope('sds').fatal('hidden: none');
    logging.close();
    expect(fs.readFileSync(file, 'utf8').trim().split('\n')).to.have.length(1);
  });

  it('writes JSON lines with level, time, scope and msg (and fields, caller, stack when asked)', () => {
    const file = tempLog();
    const logging = new Logging('pilot-discovery', () => FIXED);
    logging.configure(
      parseLoggingOptions('pilot-discovery', {
        log_as_json: true,
        log_caller: 'ads',
        log_stacktrace_level: 'ads:error',
        log_target: [file],
      }),
    );
    logging.scope('ads').info('pushed', { proxies: 3, type: 'cds' });
    logging.scope('ads').error('push failed');
    logging.scope('ca').error('no caller here');
    logging.close();
    const records = fs
      .readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(records[0]).to.include({ level: 'info', time: '2026-11-21T10:20:30.123000Z', scope: 'ads', msg: 'pushed', proxies: 3, type: 'cds' });
    expect(records[0].caller).to.match(/logging\.test\.js:\d+$/);
    expect(records[0]).not.to.have.property('stack');
    expect(records[1].stack).to.be.a('string').and.include('logging.test.js');
    expect(records[2]).not.to.have.property('caller');
  });

  it('writes to several targets', () => {
    const a = tempLog();
    const b = tempLog();
    const logging = new Logging('install-cni', () => FIXED);
    logging.configure(parseLoggingOptions('install-cni', { log_target: [a, b] }));
    logging.scope('cni-plugin').info('both');
    logging.close();
    expect(fs.readFileSync(a, 'utf8')).to.equal(fs.readFileSync(b, 'utf8')).and.include('both');
  });

  it('rejects unknown scopes and levels, naming the flag and the choices', () => {
    expect(() => parseLoggingOptions('pilot-agent', { log_output_level: 'serverca:info' })).to.throw(LoggingOptionError, /unknown scope "serverca"/);
    expect(() => parseLoggingOptions('pilot-discovery', { log_output_level: 'serverca:loud' })).to.throw(/invalid level "loud"/);
    expect(() => parseLoggingOptions('install-cni', { log_stacktrace_level: 'nope:error' })).to.throw(/--log_stacktrace_level: unknown scope/);
    expect(() => parseLoggingOptions('install-cni', { log_caller: 'cni-plugin,bogus' })).to.throw(/--log_caller: unknown scope "bogus"/);
  });

  it('is applied from the command line: a bad scope is an error, a good one is accepted', async () => {
    const bad = await runCli('pilot-agent', ['version', '--log_output_level', 'serverca:debug']);
    expect(bad.code).to.equal(1);
    expect(bad.stderr).to.match(/--log_output_level: unknown scope "serverca"/);
    const good = await runCli('pilot-agent', ['version', '--log_output_level', 'sds:debug', '--log_as_json', '--vklog', '2']);
    expect(good.code).to.equal(0);
    // pilot-discovery takes the logging flags on `discovery` only.
    const notHere = await runCli('pilot-discovery', ['version', '--log_as_json']);
    expect(notHere.code).to.equal(1);
    expect(notHere.stderr).to.match(/log_as_json/);
  });

  describe('live scopes (what the introspection facility shows and changes)', () => {
    it('knows the declared scopes, with a description each, and those created at run time', () => {
      const logging = new Logging('pilot-discovery', () => FIXED);
      for (const program of Object.keys(PROGRAM_SCOPES) as Array<keyof typeof PROGRAM_SCOPES>) {
        for (const scope of PROGRAM_SCOPES[program].filter((s) => s !== 'all')) expect(SCOPE_DESCRIPTIONS[scope], `${program} ${scope}`).to.be.a('string').and.not.equal('');
      }
      expect(logging.scopeNames()).to.include('ads').and.not.include('all');
      expect(logging.scopeState('late')).to.equal(undefined);
      logging.scope('late');
      expect(logging.scopeState('late')).to.deep.equal({ name: 'late', description: '', outputLevel: 'info', stackTraceLevel: 'none', logCallers: false });
      expect(logging.scopeNames()).to.include('late');
      expect(() => logging.setOutputLevel('all', 'debug')).to.throw(UnknownScopeError, /unknown scope "all"/);
      expect(() => logging.setStackTraceLevel('nosuch', 'debug')).to.throw(UnknownScopeError);
    });

    it('changes what is written from the next message on', () => {
      const file = tempLog();
      const logging = new Logging('pilot-discovery', () => FIXED);
      logging.configure(parseLoggingOptions('pilot-discovery', { log_output_level: 'ca:warn', log_target: [file] }));
      logging.scope('ads').debug('hidden: ads at info');
      logging.setOutputLevel('ads', 'debug');
      logging.scope('ads').debug('shown: ads at debug');
      logging.setOutputLevel('ca', 'none');
      logging.scope('ca').error('hidden: ca at none');
      logging.setStackTraceLevel('ads', 'info');
      logging.setLogCallers('ads', true);
      logging.scope('ads').info('with stack and caller');
      expect(logging.scopeState('ads')).to.include({ outputLevel: 'debug', stackTraceLevel: 'info', logCallers: true });
      logging.close();
      const text = fs.readFileSync(file, 'utf8');
      expect(text).to.contain('shown: ads at debug').and.not.contain('hidden');
      expect(text).to.match(/\tads\t\S+\.js:\d+\twith stack and caller\n\s*at /);
    });
  });
});

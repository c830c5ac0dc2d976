import { expect } from 'chai';
import { changesFor, EVERY_SCOPE, parseScopeLevels, resetChanges } from '../../../src/modules/admin';
import { UserError } from '../../../src/modules/shared/user-error';

const SCOPES = ['ads', 'default', 'model'];

describe('admin log: --level and --stack-trace-level', () => {
  it('reads <scope>:<level> pairs, and one bare level (or all:) for every scope', () => {
    expect([...parseScopeLevels('--level', 'ads:debug, default:warn')]).to.deep.equal([
      ['ads', 'debug'],
      ['default', 'warn'],
    ]);
    expect([...parseScopeLevels('--level', 'debug')]).to.deep.equal([[EVERY_SCOPE, 'debug']]);
    expect([...parseScopeLevels('--level', 'all:error')]).to.deep.equal([[EVERY_SCOPE, 'error']]);
  });

  it('refuses bad levels and empty input before asking any daemon, naming the flag', () => {
    expect(() => parseScopeLevels('--level', 'ads:loud')).to.throw(UserError, /^--level: invalid level "loud" in "ads:loud"; levels are none, error, warn, info, debug$/);
    expect(() => parseScopeLevels('--level', 'ads:fatal')).to.throw(/invalid level "fatal"/);
    expect(() => parseScopeLevels('--stack-trace-level', 'verbose')).to.throw(/^--stack-trace-level: invalid level "verbose"/);
    expect(() => parseScopeLevels('--level', ':debug')).to.throw(/missing scope/);
    expect(() => parseScopeLevels('--level', ' , ')).to.throw(/no level given/);
  });

  it('expands to per-scope changes against a daemon\'s scopes; a named scope wins over the bare level', () => {
    const changes = changesFor(SCOPES, parseScopeLevels('--level', 'info,ads:debug'), parseScopeLevels('--stack-trace-level', 'ads:error'), 'pod meshd-1.mesh-system');
    expect([...changes]).to.deep.equal([
      ['ads', { output_level: 'debug', stack_trace_level: 'error' }],
      ['default', { output_level: 'info' }],
      ['model', { output_level: 'info' }],
    ]);
    expect(() => changesFor(SCOPES, parseScopeLevels('--level', 'ads:debug,nosuch:info'), undefined, 'pod meshd-1.mesh-system')).to.throw(
      UserError,
      '--level: unknown scope "nosuch" on pod meshd-1.mesh-system; its scopes are ads, default, model',
    );
    expect([...resetChanges(SCOPES)].map(([, u]) => u)).to.deep.equal(SCOPES.map(() => ({ output_level: 'info', stack_trace_level: 'none' })));
  });
});

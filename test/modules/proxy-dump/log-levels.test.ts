/**
 * `proxy-config log --level`: the forms the reference takes (one level, `<logger>:<level>`
 * lists, `=` for `:`, `warn`, `level:` for every logger, a fine-grain `path::` prefix), the
 * requests they make in its order, clear errors for bad syntax, and the admin answer read back.
 */
import { expect } from 'chai';
import { checkLoggerNames, levelRequests, parseActiveLoggers, parseLevelFlag } from '../../../src/modules/proxy-dump';

const errorOf = (f: () => unknown): string => {
  try {
    f();
  } catch (err) {
    return (err as Error).message;
  }
  return '';
};

describe('proxy-config log levels', () => {
  it('reads one level for every logger, or logger levels, into the requests the reference sends', () => {
    expect(levelRequests(parseLevelFlag('debug'))).to.deep.equal(['/logging?level=debug']);
    expect(levelRequests(parseLevelFlag('http:debug,rbac=trace'))).to.deep.equal(['/logging?http=debug', '/logging?rbac=trace']);
    expect(levelRequests(parseLevelFlag('rbac:warn, info ,level:error'))).to.deep.equal(['/logging?level=error', '/logging?rbac=warning']);
    expect(levelRequests(parseLevelFlag('source/common::http:OFF,http:critical'))).to.deep.equal(['/logging?http=critical']);
    expect(levelRequests(parseLevelFlag(''))).to.deep.equal([]);
  });

  it('refuses bad syntax naming the flag and the part', () => {
    expect(errorOf(() => parseLevelFlag('loud'))).to.equal('--level "loud": unrecognized logging level "loud"; levels are trace, debug, info, warning, error, critical, off');
    expect(errorOf(() => parseLevelFlag('http:loud'))).to.contain('unrecognized logging level "loud"');
    expect(errorOf(() => parseLevelFlag('http:'))).to.equal('--level "http:": "http:" has no level after the logger name');
    expect(errorOf(() => parseLevelFlag(':debug'))).to.equal('--level ":debug": ":debug" has no logger name before its level');
    expect(errorOf(() => parseLevelFlag('a b:debug'))).to.contain('"a b" is not a logger name');
  });

  it('reads the active loggers of an admin answer and checks names against them', () => {
    const known = parseActiveLoggers('active loggers:\n  admin: warning\n  http: debug\n\n', 'pod a in namespace b');
    expect([...known]).to.deep.equal([['admin', 'warning'], ['http', 'debug']]);
    expect(errorOf(() => checkLoggerNames(parseLevelFlag('http:info,redis:debug'), known, 'pod a in namespace b'))).to.equal(
      'unrecognized logger name redis for pod a in namespace b; its loggers are admin, http',
    );
    expect(errorOf(() => parseActiveLoggers('<html>', 'pod a in namespace b'))).to.equal('pod a in namespace b: the admin /logging answer has no "active loggers:" list');
  });
});

import { expect } from 'chai';
import { Duration, Settings, SettingValueError } from '../../../src/modules/settings';

describe('Settings (typed accessors)', () => {
  it('returns defaults typed: D, I, F, B, S', () => {
    const s = new Settings('pilot-discovery', {});
    expect(s.duration('PILOT_DEBOUNCE_AFTER').toString()).to.equal('100ms');
    expect(s.duration('PILOT_DEBOUNCE_AFTER')).to.be.instanceOf(Duration);
    expect(s.int('PILOT_XDS_CACHE_SIZE')).to.equal(60000);
    expect(s.float('PILOT_TRACE_SAMPLING')).to.equal(1);
    expect(s.bool('ENABLE_CA_SERVER')).to.equal(true);
    expect(s.string('TOKEN_AUDIENCES')).to.equal('mesh-ca');
    expect(s.string('AUDIENCE')).to.equal('');
  });

  it('parses values from the environment by type', () => {
    const s = new Settings('pilot-discovery', {
      PILOT_DEBOUNCE_AFTER: '250ms',
      PILOT_DEBOUNCE_MAX: '1h0m0s',
      PILOT_XDS_CACHE_SIZE: '42',
      PILOT_MAX_REQUESTS_PER_SECOND: '12.5',
      ENABLE_CA_SERVER: 'FALSE',
      MESH_DELTA_XDS: '0',
      XDS_AUTH_PLAINTEXT: 'True',
      PILOT_HTTP10: '1',
    });
    expect(s.duration('PILOT_DEBOUNCE_AFTER').milliseconds).to.equal(250);
    expect(s.duration('PILOT_DEBOUNCE_MAX').seconds).to.equal(3600);
    expect(s.int('PILOT_XDS_CACHE_SIZE')).to.equal(42);
    expect(s.float('PILOT_MAX_REQUESTS_PER_SECOND')).to.equal(12.5);
    expect(s.bool('ENABLE_CA_SERVER')).to.equal(false);
    expect(s.bool('MESH_DELTA_XDS')).to.equal(false);
    expect(s.bool('XDS_AUTH_PLAINTEXT')).to.equal(true);
    expect(s.bool('PILOT_HTTP10')).to.equal(true);
    expect(s.resolve('PILOT_XDS_CACHE_SIZE').fromEnvironment).to.equal(true);
    expect(s.resolve('PILOT_ENABLE_XDS_CACHE').fromEnvironment).to.equal(false);
  });

  const bad: [string, string, string][] = [
    ['PILOT_DEBOUNCE_AFTER', 'fast', 'duration (type D'],
    ['PILOT_XDS_CACHE_SIZE', '6e4', 'integer (type I'],
    ['PILOT_XDS_CACHE_SIZE', '1.5', 'integer (type I'],
    ['PILOT_TRACE_SAMPLING', 'lots', 'floating-point number (type F'],
    ['ENABLE_CA_SERVER', 'yes', 'boolean (type B'],
  ];
  for (const [name, value, expected] of bad) {
    it(`rejects ${name}=${value} naming the variable, the value and the type`, () => {
      let error: unknown;
      try {
        new Settings('pilot-discovery', { [name]: value });
      } catch (err) {
        error = err;
      }
      expect(error).to.be.instanceOf(SettingValueError);
      const message = (error as Error).message;
      expect(message).to.include(name).and.include(`"${value}"`).and.include(expected);
      expect(message).not.to.include('\n');
    });
  }

  it('only reads the settings of its program', () => {
    // AUDIENCE is daemon-only: the agent neither validates nor takes it.
    const agent = new Settings('pilot-agent', { AUDIENCE: 'x', PILOT_DEBOUNCE_AFTER: '1s' });
    expect(agent.string('AUDIENCE')).to.equal('');
    expect(agent.duration('PILOT_DEBOUNCE_AFTER').toString()).to.equal('1s');
    expect(() => new Settings('pilot-agent', { MAX_WORKLOAD_CERT_TTL: 'soon' })).not.to.throw();
    expect(() => new Settings('pilot-discovery', { MAX_WORKLOAD_CERT_TTL: 'soon' })).to.throw(SettingValueError);
  });

  it('takes plugin settings and validates them', () => {
    const s = new Settings('meshctl', { MESH_X_ON: 'true', MESH_X_BAD: 'nope' });
    s.extend([{ name: 'MESH_X_ON', type: 'B', default: 'false', meaning: 'x', programs: ['meshctl'] }]);
    expect(s.resolve('MESH_X_ON').value).to.equal(true);
    expect(() => s.extend([{ name: 'MESH_X_BAD', type: 'B', default: undefined, meaning: '', programs: ['meshctl'] }])).to.throw(
      SettingValueError,
    );
    expect(() => s.extend([{ name: 'MESH_X_ON', type: 'B', default: undefined, meaning: '', programs: ['meshctl'] }])).to.throw(/twice/);
  });
});

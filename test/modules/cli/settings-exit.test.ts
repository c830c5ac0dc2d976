import { expect } from 'chai';
import { runCli } from '../../helpers/run-cli';

describe('a bad setting stops the program', () => {
  it('exits 1 with one line naming the variable, the value and the expected type', async () => {
    const r = await runCli('pilot-discovery', ['version'], { env: { PILOT_DEBOUNCE_AFTER: 'fast' } });
    expect(r.code).to.equal(1);
    expect(r.stdout).to.equal('');
    const lines = r.stderr.trim().split('\n');
    expect(lines).to.have.length(1);
    expect(lines[0]).to.match(/PILOT_DEBOUNCE_AFTER/).and.match(/"fast"/).and.match(/duration \(type D/);
  });

  it('applies to the programs that read the setting', async () => {
    const agent = await runCli('pilot-agent', ['version'], { env: { PROXY_STATUS_PORT: 'x15021' } });
    expect(agent.code).to.equal(1);
    expect(agent.stderr).to.match(/"x15021" for setting PROXY_STATUS_PORT: expected an integer/);
    const cni = await runCli('install-cni', ['version'], { env: { REPAIR_ENABLED: 'maybe' } });
    expect(cni.code).to.equal(1);
    expect(cni.stderr).to.match(/"maybe" for setting REPAIR_ENABLED.*boolean/);
    // The daemon does not read the agent's settings.
    const daemon = await runCli('pilot-discovery', ['version'], { env: { PROXY_STATUS_PORT: 'x15021' } });
    expect(daemon.code).to.equal(0);
  });

  it('runs normally with good values', async () => {
    const r = await runCli('pilot-discovery', ['version'], {
      env: { PILOT_DEBOUNCE_AFTER: '250ms', PILOT_XDS_CACHE_SIZE: '10', PILOT_TRACE_SAMPLING: '0.5', ENABLE_CA_SERVER: 'False' },
    });
    expect(r.code).to.equal(0);
    expect(r.stderr).to.equal('');
  });
});

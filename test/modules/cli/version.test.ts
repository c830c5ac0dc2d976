import { expect } from 'chai';
import { parse } from 'yaml';
import { runCli } from '../../helpers/run-cli';
import { readBuildInfo } from '../../../src/modules/build-info';

const PROGRAMS = ['pilot-discovery', 'pilot-agent', 'install-cni'] as const;

describe('version', () => {
  const info = readBuildInfo();

  it('knows the package version, the git revision and the Node version', () => {
    expect(info.version).to.match(/^\d+\.\d+\.\d+/);
    expect(info.revision).to.match(/^([0-9a-f]{40}|unknown)$/);
    expect(info.nodeVersion).to.equal(process.version);
  });

  for (const program of PROGRAMS) {
    it(`${program} version prints the short version by default`, async () => {
      const r = await runCli(program, ['version']);
      expect(r.code, r.stderr).to.equal(0);
      expect(r.stdout).to.equal(`${info.version}\n`);
    });

    it(`${program} version --short=false prints the full build info`, async () => {
      const r = await runCli(program, ['version', '--short=false']);
      expect(r.code, r.stderr).to.equal(0);
      expect(r.stdout.trim()).to.equal(
        `version.BuildInfo{Version:"${info.version}", GitRevision:"${info.revision}", NodeVersion:"${process.version}", BuildStatus:"${info.status}", GitTag:"${info.tag}"}`,
      );
    });

    it(`${program} version -o json and -o yaml print the build info as data`, async () => {
      const json = await runCli(program, ['version', '-o', 'json']);
      expect(JSON.parse(json.stdout)).to.deep.equal({ clientVersion: info });
      const yaml = await runCli(program, ['version', '--output=yaml']);
      expect(parse(yaml.stdout)).to.deep.equal({ clientVersion: info });
    });
  }

  it('rejects an unknown output format', async () => {
    const r = await runCli('pilot-agent', ['version', '-o', 'xml']);
    expect(r.code).to.equal(1);
    expect(r.stderr).to.match(/--output=xml.*yaml, json/);
  });

  it('meshctl version prints the client version, then says in one line why the control plane could not be asked', async () => {
    // No orchestrator config: the daemons cannot be found (test/modules/discovery/proxy-status.test.ts asks real ones).
    const r = await runCli('meshctl', ['version'], { env: { HOME: '/nonexistent' } });
    expect(r.code).to.equal(1);
    expect(r.stdout).to.equal(`${info.version}\n`);
    expect(r.stderr).to.match(/^Error: control plane version: .*\(--remote=false checks the client only\)\n$/);
    const local = await runCli('meshctl', ['version', '--remote=false', '-s=false']);
    expect(local.stderr).to.equal('');
    expect(local.stdout).to.match(/^version\.BuildInfo\{Version:"/);
  });

  it('meshctl bug-report version prints the build version, short by default', async () => {
    const r = await runCli('meshctl', ['bug-report', 'version']);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.equal(`${info.version}\n`);
    const json = await runCli('meshctl', ['bug-report', 'version', '-o', 'json']);
    expect(JSON.parse(json.stdout)).to.deep.equal({ clientVersion: info });
  });
});

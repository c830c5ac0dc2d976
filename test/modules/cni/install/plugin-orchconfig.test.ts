import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { buildPluginOrchConfig } from '../../../../src/modules/cni/install';
import { loadOrchConfig, OrchConfigError } from '../../../../src/modules/orch';

const CA = '-----BEGIN CERTIFICATE-----\nMIIBinstaller\n-----END CERTIFICATE-----\n';
const OTHER_CA = '-----BEGIN CERTIFICATE-----\nMIIBother\n-----END CERTIFICATE-----\n';

function installerConfig(user: string): string {
  return `apiVersion: v1
kind: Config
clusters:
- name: home
  cluster:
    server: https://127.0.0.1:6443
    certificate-authority-data: ${Buffer.from(CA).toString('base64')}
users:
- name: installer
  user:
${user}
contexts:
- name: here
  context: {cluster: home, user: installer}
current-context: here
`;
}

describe("install-cni: the plug-in's orchestrator config", () => {
  let dir: string;
  const file = (name: string, text: string) => {
    const p = path.join(dir, name);
    fs.writeFileSync(p, text);
    return p;
  };
  const build = (orchConfigPath: string, more: { orchCaFile?: string; skipTlsVerify?: boolean } = {}) =>
    buildPluginOrchConfig({ orchConfigPath, orchCaFile: more.orchCaFile ?? '', orchCaFileSource: '--orch-ca-file', skipTlsVerify: more.skipTlsVerify ?? false });
  /** Reads the written config back with the orchestrator client, as the plug-in will. */
  const readBack = (text: string) => loadOrchConfig(file('written', text));

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-cni-orch-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it("carries the installer's server, CA and token", () => {
    const config = build(file('orch', installerConfig('    token: abc.def')));
    const back = readBack(config.text);
    expect(back.getCurrentCluster()).to.include({ server: 'https://127.0.0.1:6443', caData: Buffer.from(CA).toString('base64'), skipTLSVerify: false });
    expect(back.getCurrentUser()!.token).to.equal('abc.def');
    expect(config.summary).to.equal("server https://127.0.0.1:6443, CA of the installer's orchestrator config, token");
    expect(config.summary).not.to.contain('abc.def');
  });

  it('reads a token file, fresh on each build (a rotated token reaches the plug-in)', () => {
    const token = file('token', 'first\n');
    const orch = file('orch', installerConfig(`    token-file: ${token}`));
    expect(readBack(build(orch).text).getCurrentUser()!.token).to.equal('first');
    fs.writeFileSync(token, 'second');
    expect(readBack(build(orch).text).getCurrentUser()!.token).to.equal('second');
  });

  it('--orch-ca-file replaces the CA; --skip-tls-verify drops verification', () => {
    const orch = file('orch', installerConfig('    token: t'));
    const withCa = readBack(build(orch, { orchCaFile: file('ca.pem', OTHER_CA) }).text);
    expect(withCa.getCurrentCluster()!.caData).to.equal(Buffer.from(OTHER_CA).toString('base64'));
    const skipped = readBack(build(orch, { skipTlsVerify: true }).text);
    expect(skipped.getCurrentCluster()).to.include({ skipTLSVerify: true, caData: undefined });
    expect(() => build(orch, { orchCaFile: path.join(dir, 'nope.pem') })).to.throw(OrchConfigError, /^cannot read the CA file .*nope\.pem \(--orch-ca-file\): ENOENT/);
  });

  it('names ORCHCONFIG when the installer has no usable orchestrator config', () => {
    expect(() => build(path.join(dir, 'missing'))).to.throw(OrchConfigError, /^ORCHCONFIG: orchestrator config .*missing: ENOENT/);
    expect(() => build(file('bad', 'clusters: [{name: c, cluster: {server: "not a url"}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\nusers: [{name: u, user: {}}]\n'))).to.throw(
      OrchConfigError,
      /^ORCHCONFIG: orchestrator config .*bad: server address "not a url" is not a URL$/,
    );
  });
});

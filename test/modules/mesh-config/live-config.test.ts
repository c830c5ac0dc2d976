/**
 * The live mesh config holder: layers (defaults <- file <- ConfigMap), refusal of versions
 * that do not parse with the last good one kept, change listeners, and the file watch as
 * config really arrives (written in place, renamed over by an editor, deleted, reappearing).
 */
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Logging } from '../../../src/modules/logging';
import { MeshConfig, MeshConfigError, MeshConfigValues, MeshNetworks } from '../../../src/modules/mesh-config';

/** A Logging that records each line as `<level> <message>`. */
function recordingLogging(): { logging: Logging; lines: string[] } {
  const lines: string[] = [];
  const scope = { info: (m: string) => lines.push(`info ${m}`), warn: (m: string) => lines.push(`warn ${m}`), error: (m: string) => lines.push(`error ${m}`) };
  return { logging: { scope: () => scope } as unknown as Logging, lines };
}

async function until(check: () => boolean, what: string, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('the live mesh config', () => {
  let dir: string;
  let file: string;
  const holders: { stop(): void }[] = [];
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-live-config-'));
    file = path.join(dir, 'mesh.yaml');
  });
  afterEach(() => {
    for (const h of holders.splice(0)) h.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  function holder(): { mesh: MeshConfig; lines: string[]; changes: [MeshConfigValues, MeshConfigValues][] } {
    const { logging, lines } = recordingLogging();
    const mesh = new MeshConfig(file, logging, 0);
    holders.push(mesh);
    const changes: [MeshConfigValues, MeshConfigValues][] = [];
    mesh.onChange((now, before) => changes.push([now, before]));
    return { mesh, lines, changes };
  }

  it('layers the ConfigMap over the file over the defaults, and clearing a layer uncovers the one below', () => {
    fs.writeFileSync(file, 'trustDomain: file.td\nrootNamespace: file-root\n');
    const { mesh, changes } = holder();
    expect([mesh.current().trustDomain, mesh.current().rootNamespace]).to.deep.equal(['file.td', 'file-root']);
    expect(mesh.setLayer('configmap', 'trustDomain: cm.td\n', 'ConfigMap mesh-system/mesh key mesh')).to.deep.equal({ ok: true });
    expect([mesh.current().trustDomain, mesh.current().rootNamespace]).to.deep.equal(['cm.td', 'file-root']);
    expect(changes.map(([now, before]) => `${before.trustDomain}->${now.trustDomain}`)).to.deep.equal(['file.td->cm.td']);
    mesh.setLayer('configmap', undefined, 'ConfigMap mesh-system/mesh key mesh');
    expect(mesh.current().trustDomain).to.equal('file.td');
    // The same text again changes nothing, and is not reported as a change.
    mesh.setLayer('configmap', undefined, 'ConfigMap mesh-system/mesh key mesh');
    expect(changes).to.have.length(2);
  });

  it('refuses a layer that does not parse, logs the error naming the source and field, keeps the last good one', () => {
    const { mesh, lines, changes } = holder();
    mesh.setLayer('configmap', 'trustDomain: good.td\n', 'ConfigMap mesh-system/mesh key mesh');
    const result = mesh.setLayer('configmap', 'defaultConfig: { proxyAdminPort: many }\n', 'ConfigMap mesh-system/mesh key mesh');
    expect(result).to.deep.equal({ ok: false, error: 'ConfigMap mesh-system/mesh key mesh: defaultConfig.proxyAdminPort: must be a port number from 0 to 65535, not "many"' });
    expect(mesh.current().trustDomain).to.equal('good.td');
    expect(changes).to.have.length(1);
    expect(lines).to.include(
      'error mesh config rejected, the last good version stays in force: ConfigMap mesh-system/mesh key mesh: defaultConfig.proxyAdminPort: must be a port number from 0 to 65535, not "many"',
    );
  });

  it('logs the warnings of a layer (unknown fields) and applies it', () => {
    const { mesh, lines } = holder();
    mesh.setLayer('configmap', 'trustDomain: td\nmystery: 1\n', 'ConfigMap x/mesh key mesh');
    expect(mesh.current().trustDomain).to.equal('td');
    expect(lines).to.include('warn ConfigMap x/mesh key mesh: mystery: unknown field (ignored)');
  });

  it('stops start-up on a file that is there but unusable, naming the file and field', () => {
    fs.writeFileSync(file, 'connectTimeout: forever\n');
    expect(() => holder()).to.throw(MeshConfigError, `--meshConfig ${file}: connectTimeout: must be a duration such as 10s or 100ms, not "forever"`);
    fs.rmSync(file);
    fs.mkdirSync(file);
    expect(() => holder()).to.throw(MeshConfigError, `--meshConfig ${file}: a directory, not a regular file`);
  });

  it('follows the file: written in place, renamed over, refused when broken, kept when deleted, taken again when it comes back', async () => {
    fs.writeFileSync(file, 'trustDomain: one.td\n');
    const { mesh, lines } = holder();
    mesh.watch();
    fs.writeFileSync(file, 'trustDomain: two.td\n');
    await until(() => mesh.current().trustDomain === 'two.td', 'the write');

    fs.writeFileSync(path.join(dir, '.mesh.yaml.swp'), 'trustDomain: three.td\n');
    fs.renameSync(path.join(dir, '.mesh.yaml.swp'), file);
    await until(() => mesh.current().trustDomain === 'three.td', 'the rename');

    fs.writeFileSync(file, 'trustDomain: [broken\n');
    await until(() => lines.some((l) => l.startsWith(`error mesh config rejected, the last good version stays in force: --meshConfig ${file}: not valid YAML`)), 'the refusal');
    expect(mesh.current().trustDomain).to.equal('three.td');

    fs.rmSync(file);
    await until(() => lines.includes(`warn --meshConfig ${file}: the file is gone; the last good mesh config stays in force`), 'the deletion warning');
    expect(mesh.current().trustDomain).to.equal('three.td');

    fs.writeFileSync(file, 'trustDomain: four.td\n');
    await until(() => mesh.current().trustDomain === 'four.td', 'the new file');
  });

  it('finds a file whose directory appears only later (polling)', async () => {
    const later = path.join(dir, 'later', 'mesh.yaml');
    const { logging } = recordingLogging();
    const mesh = new MeshConfig(later, logging, 50);
    holders.push(mesh);
    mesh.watch();
    expect(mesh.current().trustDomain).to.equal('cluster.local');
    fs.mkdirSync(path.dirname(later));
    fs.writeFileSync(later, 'trustDomain: late.td\n');
    await until(() => mesh.current().trustDomain === 'late.td', 'the late file');
  });

  it('mesh networks: the ConfigMap key replaces the file; invalid versions are refused', () => {
    const networksFile = path.join(dir, 'networks.yaml');
    fs.writeFileSync(networksFile, 'networks: { a: { endpoints: [{ fromRegistry: c1 }] } }\n');
    const { logging, lines } = recordingLogging();
    const networks = new MeshNetworks(networksFile, logging, 0);
    holders.push(networks);
    expect(Object.keys(networks.current().networks)).to.deep.equal(['a']);
    networks.setLayer('configmap', 'networks: { b: { endpoints: [{ fromRegistry: c2 }] } }\n', 'ConfigMap x/mesh key meshNetworks');
    expect(Object.keys(networks.current().networks)).to.deep.equal(['b']);
    expect(networks.setLayer('configmap', 'networks: { b: { endpoints: [{ fromCidr: nope }] } }\n', 'ConfigMap x/mesh key meshNetworks').ok).to.equal(false);
    expect(Object.keys(networks.current().networks)).to.deep.equal(['b']);
    expect(lines.some((l) => l.includes('mesh networks rejected, the last good version stays in force: ConfigMap x/mesh key meshNetworks: networks.b.endpoints[0].fromCidr'))).to.equal(true);
    networks.setLayer('configmap', undefined, 'ConfigMap x/mesh key meshNetworks');
    expect(Object.keys(networks.current().networks)).to.deep.equal(['a']);
  });
});

describe('the options the daemon builds config with follow the live mesh config', () => {
  it('trust domain, aliases, auto mTLS, meshMTLS and path normalization change with a layer, without a new container', async () => {
    const { createContainer } = await import('../../../src/container');
    const { MtlsOptionsToken } = await import('../../../src/modules/security/mtls');
    const { AuthzOptionsToken } = await import('../../../src/modules/security/authz');
    const { SidecarGeneratorOptionsToken } = await import('../../../src/modules/generators/sidecar');
    const { REPO_ROOT } = await import('../../helpers/run-cli');
    const { container } = createContainer({ program: 'pilot-discovery', env: {}, cwd: REPO_ROOT });
    const mesh = container.get(MeshConfig);
    const mtls = container.get<{ trustDomain: string; enableAutoMtls: boolean; minProtocolVersion: string }>(MtlsOptionsToken);
    const authz = container.get<{ trustDomain: string; trustDomainAliases: readonly string[] }>(AuthzOptionsToken);
    const sidecar = container.get<{ pathNormalization: string }>(SidecarGeneratorOptionsToken);
    const now = () => [mtls.trustDomain, mtls.enableAutoMtls, mtls.minProtocolVersion, authz.trustDomain, authz.trustDomainAliases, sidecar.pathNormalization];
    expect(now()).to.deep.equal(['cluster.local', true, 'TLSV1_2', 'cluster.local', [], 'BASE']);
    mesh.setLayer(
      'configmap',
      'trustDomain: td1\ntrustDomainAliases: [td0]\nenableAutoMtls: false\nmeshMTLS: { minProtocolVersion: TLSV1_3 }\npathNormalization: { normalization: NONE }\n',
      'ConfigMap x/mesh key mesh',
    );
    expect(now()).to.deep.equal(['td1', false, 'TLSV1_3', 'td1', ['td0'], 'NONE']);
  });
});

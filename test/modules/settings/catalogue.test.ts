import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CATALOGUE } from '../../../src/modules/settings';
import { REPO_ROOT } from '../../helpers/run-cli';

/** Rows of a markdown table: cells, without header and separator. */
function tableRows(file: string): string[][] {
  return fs
    .readFileSync(path.join(REPO_ROOT, 'test', 'fixtures', 'settings', file), 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('|'))
    .slice(2)
    .map((l) => l.slice(1, -1).split(/(?<!\\)\|/).map((c) => c.trim().replace(/\\\|/g, '|')));
}

const byName = new Map(CATALOGUE.map((s) => [s.name as string, s]));
const specDefault = (cell: string) => (cell === '-' ? undefined : cell.replace(/^`|`$/g, '').replace(/<mesh_domain>/g, 'mesh.io'));

describe('settings catalogue against the spec tables', () => {
  const daemon = tableRows('daemon-settings.md');
  const agent = tableRows('agent-settings.md');
  const cni = tableRows('install-cni-settings.md');

  it('holds every setting of the three tables exactly once', () => {
    const names = CATALOGUE.map((s) => s.name);
    expect(new Set(names).size).to.equal(names.length);
    for (const [name] of [...daemon, ...agent, ...cni]) expect(byName.has(name), name).to.equal(true);
  });

  it('has each spec/01 setting with its type, default and meaning, read by the daemon', () => {
    // Two defaults are descriptions in the spec; the catalogue holds the concrete value.
    const described: Record<string, string> = { MCS_API_GROUP: 'multicluster.x-k8s.io' };
    // Settings the spec leaves "unspecified meaning" whose meaning the catalogue gives, now that they do something.
    const explained = new Set(['HTTP_STRIP_FRAGMENT_FROM_PATH_UNSAFE_IF_DISABLED']);
    for (const [name, type, def, meaning] of daemon) {
      const s = byName.get(name)!;
      expect(s.type, name).to.equal(type);
      expect(s.default, name).to.equal(described[name] ?? specDefault(def));
      if (explained.has(name)) {
        expect(meaning, name).to.equal('unspecified meaning');
        expect(s.meaning, name).to.not.match(/unspecified/);
      } else {
        expect(s.meaning, name).to.equal(meaning.replace(/<mesh_domain>/g, 'mesh.io'));
      }
      expect(s.programs, name).to.include('pilot-discovery');
    }
  });

  it('gives the agent the shared settings up to PILOT_STATUS_BURST, less the daemon-only ones', () => {
    const daemonOnly = new Set(['AUDIENCE', 'DEFAULT_WORKLOAD_CERT_TTL', 'INJECT_ENABLED', 'JWT_RULE', 'MAX_WORKLOAD_CERT_TTL',
      'ORCH_INGRESS_NS', 'ORCH_SIGNER', 'SERVERLESS_REVISION']);
    let beforeCut = true;
    for (const [name] of daemon) {
      const expected = beforeCut && !daemonOnly.has(name) && !name.startsWith('CA_ENABLE_JITTER') && !name.startsWith('CA_SELF_SIGNED_');
      expect(byName.get(name)!.programs.includes('pilot-agent'), name).to.equal(expected);
      if (name === 'PILOT_STATUS_BURST') beforeCut = false;
    }
    for (const [name, type, def] of agent) {
      const s = byName.get(name)!;
      expect(s.programs, name).to.deep.equal(['pilot-agent']);
      expect(s.type, name).to.equal(type);
      if (name !== 'CA_PROVIDER') expect(s.default, name).to.equal(specDefault(def));
    }
  });

  it('gives install-cni its own table and the shared settings but certificate lifetimes, token audiences and platform detection', () => {
    for (const [name, type, def] of cni) {
      const s = byName.get(name)!;
      expect(s.programs, name).to.include('install-cni');
      expect(s.type, name).to.equal(type);
      if (name !== 'POD_NAMESPACE') expect(s.default, name).to.equal(specDefault(def));
    }
    for (const name of ['DEFAULT_WORKLOAD_CERT_TTL', 'MAX_WORKLOAD_CERT_TTL', 'TOKEN_AUDIENCES', 'CLOUD_PLATFORM', 'PLATFORM']) {
      expect(byName.get(name)!.programs, name).not.to.include('install-cni');
    }
    expect(byName.get('PILOT_DEBOUNCE_AFTER')!.programs).to.include('install-cni');
  });
});

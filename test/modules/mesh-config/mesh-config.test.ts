import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createContainer } from '../../../src/container';
import { CommandScope } from '../../../src/modules/cli/command-scope';
import { DEFAULT_MESH_CONFIG, MeshConfig, MeshConfigError, MeshConfigFileToken, parseMeshConfig, readMeshConfigFile } from '../../../src/modules/mesh-config';
import { REPO_ROOT } from '../../helpers/run-cli';

const WHERE = '--meshConfig ./mesh.yaml';
const parse = (text: string) => parseMeshConfig(text, WHERE);
const failure = (text: string) => {
  try {
    parse(text);
  } catch (err) {
    expect(err).to.be.instanceOf(MeshConfigError);
    return (err as Error).message;
  }
  throw new Error('parsed without an error');
};

describe('mesh config', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-config-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('has the defaults: cluster.local, no aliases, mesh-system, auto mTLS, BASE path normalization', () => {
    expect(DEFAULT_MESH_CONFIG).to.deep.equal({
      trustDomain: 'cluster.local',
      trustDomainAliases: [],
      rootNamespace: 'mesh-system',
      enableAutoMtls: true,
      pathNormalization: 'BASE',
    });
    expect(parse('')).to.deep.equal(DEFAULT_MESH_CONFIG);
  });

  it('reads the incumbent field names, keeps defaults for absent or null fields and ignores the fields it does not know', () => {
    const text = `
trustDomain: example.org
trustDomainAliases: [old.example.org]
rootNamespace: mesh-root
enableAutoMtls: false
pathNormalization: { normalization: MERGE_SLASHES }
defaultConfig: { discoveryAddress: meshd.mesh-system.svc:15012 }
accessLogFile: /dev/stdout
`;
    expect(parse(text)).to.deep.equal({
      trustDomain: 'example.org',
      trustDomainAliases: ['old.example.org'],
      rootNamespace: 'mesh-root',
      enableAutoMtls: false,
      pathNormalization: 'MERGE_SLASHES',
    });
    expect(parse('trustDomain:\nrootNamespace: other\npathNormalization: {}')).to.deep.equal({ ...DEFAULT_MESH_CONFIG, rootNamespace: 'other' });
    expect(parse('{"trustDomain": "json.example"}').trustDomain).to.equal('json.example');
  });

  it('names the file and the field of a wrongly typed value', () => {
    expect(failure('trustDomain: 42')).to.equal(`${WHERE}: trustDomain: must be a string`);
    expect(failure('trustDomain: ""')).to.equal(`${WHERE}: trustDomain: must not be empty`);
    expect(failure('trustDomain: a/b')).to.equal(`${WHERE}: trustDomain: "a/b" is not a trust domain (no "/" or spaces)`);
    expect(failure('trustDomainAliases: old.example.org')).to.equal(`${WHERE}: trustDomainAliases: must be a list of strings`);
    expect(failure('trustDomainAliases: [ok.example, 7]')).to.equal(`${WHERE}: trustDomainAliases[1]: must be a string`);
    expect(failure('rootNamespace: [a]')).to.equal(`${WHERE}: rootNamespace: must be a string`);
    expect(failure('enableAutoMtls: "yes"')).to.equal(`${WHERE}: enableAutoMtls: must be true or false`);
    expect(failure('pathNormalization: BASE')).to.equal(`${WHERE}: pathNormalization: must be a mapping (normalization: <mode>)`);
    expect(failure('pathNormalization: { normalization: SQUASH }')).to.equal(
      `${WHERE}: pathNormalization.normalization: unknown mode "SQUASH" (one of NONE, BASE, DEFAULT, MERGE_SLASHES, DECODE_AND_MERGE_SLASHES)`,
    );
  });

  it('refuses a file that is not YAML, or not a mapping, in one line', () => {
    const message = failure('trustDomain: [unclosed');
    expect(message).to.match(new RegExp(`^${WHERE}: not valid YAML: `));
    expect(message).to.not.contain('\n');
    expect(failure('- a\n- b')).to.equal(`${WHERE}: must be a mapping of mesh config fields`);
  });

  it('uses the defaults when the file does not exist, and refuses one it cannot read', () => {
    expect(readMeshConfigFile(path.join(dir, 'absent'))).to.deep.equal(DEFAULT_MESH_CONFIG);
    expect(() => readMeshConfigFile(dir)).to.throw(MeshConfigError, `--meshConfig ${dir}: cannot read the file: EISDIR`);
  });

  it('is read from the file bound in a command scope, and is the defaults without one', () => {
    const file = path.join(dir, 'mesh');
    fs.writeFileSync(file, 'trustDomain: example.org\nrootNamespace: mesh-root\n');
    const scoped = createContainer({ program: 'pilot-discovery', env: {}, cwd: REPO_ROOT }).container;
    const mesh = scoped.get<CommandScope>(CommandScope).resolve(MeshConfig, [[MeshConfigFileToken, file]]);
    expect([mesh.trustDomain, mesh.rootNamespace]).to.deep.equal(['example.org', 'mesh-root']);
    const unscoped = createContainer({ program: 'pilot-discovery', env: {}, cwd: REPO_ROOT }).container.get(MeshConfig);
    expect([unscoped.trustDomain, unscoped.rootNamespace]).to.deep.equal(['cluster.local', 'mesh-system']);
  });
});

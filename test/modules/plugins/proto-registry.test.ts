import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createContainer } from '../../../src/container';
import { decodeMessage, encodeMessage } from '../../../src/modules/envoy/protos';
import { meshPlugin, PluginLoadError, ProtoContribution, ProtoRegistry } from '../../../src/modules/plugins';
import { REPO_ROOT } from '../../helpers/run-cli';

const FILTER = 'envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter';

describe('plugin protos (ProtoContribution, ProtoRegistry)', () => {
  let dir: string;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-protos-'));
    fs.mkdirSync(path.join(dir, 'test', 'protoreg', 'v1'), { recursive: true });
    // It imports a core proto, resolved from the mesh's include directories.
    fs.writeFileSync(
      path.join(dir, 'test', 'protoreg', 'v1', 'thing.proto'),
      'syntax = "proto3";\npackage test.protoreg.v1;\nimport "google/protobuf/duration.proto";\nmessage Thing { string label = 1; google.protobuf.Duration wait = 2; }\n',
    );
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  const registryOf = (...contributions: ProtoContribution[]) => new ProtoRegistry({ getContributions: () => contributions });

  it("puts a plugin's proto into the shared root: its typed_config then encodes and decodes", () => {
    registryOf({ protoRoot: dir, protoFiles: ['test/protoreg/v1/thing.proto'] }).load();
    const typed = { '@type': 'type.googleapis.com/test.protoreg.v1.Thing', label: 'x', wait: { seconds: '3', nanos: 0 } };
    const decoded = decodeMessage(FILTER, encodeMessage(FILTER, { name: 'thing', typed_config: typed }));
    expect(decoded.typed_config).to.deep.equal(typed);
  });

  it('stops start-up naming the plugin when a proto file is missing', () => {
    @meshPlugin({ name: 'protoless', enabledBy: 'PILOT_HTTP10', provides: [ProtoContribution] })
    class Protoless implements ProtoContribution {
      readonly protoRoot = dir;
      readonly protoFiles = ['test/protoreg/v1/missing.proto'];
    }
    expect(() => registryOf(new Protoless()).load()).to.throw(PluginLoadError, `plugin "protoless": proto file test/protoreg/v1/missing.proto not found under ${dir}`);
  });

  it('has the built-in ALPN and metadata exchange protos come from their plugins, in every program', () => {
    createContainer({ program: 'pilot-agent', env: {}, cwd: REPO_ROOT });
    for (const typed of [
      { '@type': 'type.googleapis.com/mesh.filters.http.alpn.v1.FilterConfig', alpn_override: [{ upstream_protocol: 'HTTP11', alpn_override: ['mesh'] }] },
      { '@type': 'type.googleapis.com/mesh.filters.network.metadata_exchange.v1.MetadataExchange', protocol: 'mesh-peer-exchange' },
    ]) {
      expect(decodeMessage(FILTER, encodeMessage(FILTER, { name: 'f', typed_config: typed })).typed_config).to.deep.equal(typed);
    }
  });
});

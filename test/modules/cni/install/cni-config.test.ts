import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  CniConfigError,
  DEFAULT_PLUGIN_TEMPLATE,
  formatCniJson,
  hasMeshPlugin,
  insertMeshPlugin,
  JsonObject,
  mergeCniConfigText,
  parseExistingCniConfig,
  parseJsonText,
  parseMeshPluginConfig,
  removeMeshPlugin,
  renderPluginConfig,
  standaloneCniConfig,
} from '../../../../src/modules/cni/install';
import { REPO_ROOT } from '../../../helpers/run-cli';

const FIXTURES = path.join(REPO_ROOT, 'test', 'fixtures', 'conformance', 'cni');
const fixture = (name: string) => fs.readFileSync(path.join(FIXTURES, name), 'utf8');

/** Every key of every object, in document order, so key order is checked as well as content. */
function keyOrder(value: unknown, at = '$'): string[] {
  if (Array.isArray(value)) return value.flatMap((v, i) => keyOrder(v, `${at}[${i}]`));
  if (value !== null && typeof value === 'object') {
    return Object.entries(value).flatMap(([k, v]) => [`${at}.${k}`, ...keyOrder(v, `${at}.${k}`)]);
  }
  return [];
}

describe('cni conformance: merging the mesh plug-in into the node network config', () => {
  const plugin = fixture('mesh-cni.conf');

  for (const [input, golden] of [
    ['bridge.conf', 'bridge.conf.golden'],
    ['list.conflist', 'list.conflist.golden'],
  ]) {
    it(`${input} + mesh-cni.conf → ${golden}`, () => {
      const merged = mergeCniConfigText(fixture(input), input, plugin, 'mesh-cni.conf');
      const expected = fixture(golden);
      expect(JSON.parse(merged)).to.deep.equal(JSON.parse(expected));
      // Sorted keys, two-space indent and a trailing newline: the golden text exactly.
      expect(keyOrder(JSON.parse(merged))).to.deep.equal(keyOrder(JSON.parse(expected)));
      expect(merged).to.equal(expected);
    });
  }

  for (const invalid of ['invalid-map.conflist', 'invalid-arr.conflist']) {
    it(`${invalid} as the existing file: a clear error naming it`, () => {
      const reason = invalid === 'invalid-map.conflist' ? /neither a plugin config \(no "type"\) nor a config list \(no "plugins"\)/ : /must be a JSON object, found an array/;
      expect(() => mergeCniConfigText(fixture(invalid), `/etc/cni/net.d/${invalid}`, plugin, 'mesh-cni.conf'))
        .to.throw(CniConfigError, new RegExp(`^/etc/cni/net\\.d/${invalid.replace('.', '\\.')}: `))
        .with.property('message')
        .that.matches(reason);
    });

    it(`${invalid} as the new plug-in config: a clear error naming its source`, () => {
      const reason = invalid === 'invalid-map.conflist' ? /has no "type"/ : /must be a JSON object, found an array/;
      expect(() => mergeCniConfigText(fixture('list.conflist'), 'list.conflist', fixture(invalid), '--cni-network-config'))
        .to.throw(CniConfigError, /^--cni-network-config: /)
        .with.property('message')
        .that.matches(reason);
    });
  }

  it('the built-in template renders exactly mesh-cni.conf under the fixture conditions', () => {
    const rendered = renderPluginConfig(
      { text: DEFAULT_PLUGIN_TEMPLATE, source: 'built-in' },
      { logLevel: 'debug', cniAgentRunDir: '/path/to/kubeconfig', podNamespace: 'my-namespace', nodeName: 'node-1', orchConfigFile: '/x', ambientEnabled: false },
    );
    expect(rendered).to.deep.equal(JSON.parse(fixture('mesh-cni.conf')));
    expect(keyOrder(rendered)).to.deep.equal(keyOrder(JSON.parse(fixture('mesh-cni.conf'))));
  });
});

describe('cni config: the mesh entry in a list', () => {
  const plugin = parseMeshPluginConfig(fixture('mesh-cni.conf'), 'mesh-cni.conf');
  const golden = () => parseExistingCniConfig(fixture('list.conflist.golden'), 'list.conflist.golden');

  it('replaces an existing mesh entry (appended last, only one) instead of adding a second', () => {
    const changed: JsonObject = { ...plugin, plugin_log_level: 'info' };
    const existing = golden();
    expect(hasMeshPlugin(existing, plugin)).to.equal(true);
    expect(hasMeshPlugin(existing, changed)).to.equal(false);
    const merged = insertMeshPlugin(existing, changed) as { plugins: JsonObject[] };
    expect(merged.plugins.map((p) => p.type)).to.deep.equal(['bridge', 'tuning', 'mesh-cni']);
    expect(merged.plugins[2].plugin_log_level).to.equal('info');
    expect(merged.plugins[2]).not.to.have.property('cniVersion');
  });

  it('removing the entry gives back the original list (other plugins, name and version kept)', () => {
    const without = removeMeshPlugin(golden());
    expect(without).to.deep.equal(JSON.parse(fixture('list.conflist')));
    expect(removeMeshPlugin(parseExistingCniConfig(fixture('list.conflist'), 'list.conflist'))).to.equal(undefined);
  });

  it('a standalone file holds only the mesh plug-in: a list, or the plugin itself for a .conf name', () => {
    const { cniVersion: _version, ...inner } = plugin;
    expect(standaloneCniConfig(plugin, 'YY-mesh-cni.conflist')).to.deep.equal({ cniVersion: '0.3.1', name: 'mesh-cni', plugins: [inner] });
    expect(standaloneCniConfig(plugin, 'mesh.conf')).to.deep.equal(plugin);
  });

  it('formats with sorted keys at every level', () => {
    expect(formatCniJson({ b: 1, a: { d: [{ z: 1, y: 2 }], c: {} } })).to.equal(
      '{\n  "a": {\n    "c": {},\n    "d": [\n      {\n        "y": 2,\n        "z": 1\n      }\n    ]\n  },\n  "b": 1\n}\n',
    );
  });
});

describe('cni config: what is wrong with an existing file, named', () => {
  const cases: Array<[string, string, RegExp]> = [
    ['bad JSON', '{\n  "name": "x",\n  "plugins": [\n    {"type": "bridge",}\n  ]\n}', /^f\.conflist: invalid JSON at line 4 column 23: expected a property name in double quotes, found "}"$/],
    ['truncated', '{"plugins": [', /^f\.conflist: invalid JSON at line 1 column 14: expected a value, found end of input$/],
    ['plugins not an array', '{"plugins": {"type": "bridge"}}', /^f\.conflist: "plugins" must be an array of plugin configs, found an object$/],
    ['plugins holding a string', '{"plugins": [{"type": "bridge"}, "tuning"]}', /^f\.conflist: plugins\[1\] must be an object, found a string$/],
    ['a plugin without type', '{"plugins": [{"name": "bridge"}]}', /^f\.conflist: plugins\[0\] has no "type"/],
    ['no plugins at all', '{"name": "x", "plugins": []}', /^f\.conflist: "plugins" is empty/],
    ['a type that is not a string', '{"type": 7}', /^f\.conflist: "type" must be a plugin name/],
    ['not an object', '"text"', /^f\.conflist: a CNI network config must be a JSON object, found a string$/],
  ];
  for (const [what, text, message] of cases) {
    it(what, () => {
      expect(() => parseExistingCniConfig(text, 'f.conflist')).to.throw(CniConfigError, message);
    });
  }

  it('the plug-in config must be a single plugin of type mesh-cni', () => {
    expect(() => parseMeshPluginConfig('{"type": "bridge"}', 'CNI_NETWORK_CONFIG')).to.throw(CniConfigError, /^CNI_NETWORK_CONFIG: "type" must be "mesh-cni"/);
    expect(() => parseMeshPluginConfig('{"plugins": []}', 'CNI_NETWORK_CONFIG')).to.throw(CniConfigError, /not a config list/);
  });
});

describe('cni config: JSON errors carry line and column', () => {
  const cases: Array<[string, string]> = [
    ['', 'line 1 column 1: expected a value, found end of input'],
    ['{"a": }', 'line 1 column 7: expected a value, found "}"'],
    ['{"a" 1}', 'line 1 column 6: expected \':\' after the property name, found "1"'],
    ['[1, 2,]', 'line 1 column 7: expected a value, found "]"'],
    ['{"a": 1} x', 'line 1 column 10: unexpected "x" after the JSON value'],
    ['{"a": "b\nc"}', 'line 1 column 9: control character in a string'],
    ['{\n "a": tru}', 'line 2 column 7: expected a value, found "t"'],
    ['{"a": -}', 'line 1 column 7: invalid number'],
    ['{"a": "\\x"}', 'line 1 column 8: invalid escape sequence in a string'],
    ['{"a": "open', 'line 1 column 7: unterminated string'],
  ];
  for (const [text, where] of cases) {
    it(JSON.stringify(text), () => {
      expect(() => parseJsonText(text, 'src')).to.throw(`src: invalid JSON at ${where}`);
    });
  }

  it('parses valid JSON as JSON.parse does', () => {
    expect(parseJsonText(' {"a": [1, -2.5e3, true, null, "\\u00e9"]} ', 'src')).to.deep.equal({ a: [1, -2500, true, null, 'é'] });
  });
});

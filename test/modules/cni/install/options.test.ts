import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  BUILT_IN_TEMPLATE_SOURCE,
  CniConfigError,
  InstallOptionsError,
  readPluginTemplate,
  renderPluginConfig,
  resolveInstallCniOptions,
  substitutePlaceholders,
} from '../../../../src/modules/cni/install';
import { RepairOptionsError } from '../../../../src/modules/cni/repair';
import { Settings } from '../../../../src/modules/settings';

const resolve = (values: Record<string, unknown>, env: Record<string, string> = {}) =>
  resolveInstallCniOptions({ values, given: new Set(Object.keys(values)) }, new Settings('install-cni', env));

const VALUES = { logLevel: 'info', cniAgentRunDir: '/run/mesh', podNamespace: 'mesh-system', nodeName: 'n1', orchConfigFile: '/run/mesh/mesh-cni-orchconfig', ambientEnabled: true };

describe('install-cni options: flags fall back to their settings', () => {
  it("uses the settings' defaults when neither is given", () => {
    const o = resolve({});
    expect(o).to.deep.include({
      ambientEnabled: false,
      chainedCniPlugin: true,
      cniAgentRunDir: '/var/run/mesh-cni',
      cniConfName: '',
      orchConfigMode: 384,
      logLevel: 'warn',
      monitoringPort: 15014,
      mountedCniNetDir: '/host/etc/cni/net.d',
      mountedCniBinDir: '/host/opt/cni/bin',
      podNamespace: 'mesh-system',
      skipTlsVerify: false,
    });
    expect(o.repair).to.deep.include({ enabled: true, initContainerExitCode: 126, initContainerName: 'mesh-validation', labelKey: 'cni.mesh.io/uninitialized' });
    expect(o.sources['monitoring-port']).to.equal('MONITORING_PORT');
  });

  it('takes a setting when its flag is not given, and the flag over the setting when it is', () => {
    const env = { CHAINED_CNI_PLUGIN: 'false', LOG_LEVEL: 'debug', MOUNTED_CNI_NET_DIR: '/from/env', REPAIR_ENABLED: 'false', ORCHCONFIG: '/k' };
    const fromEnv = resolve({}, env);
    expect(fromEnv).to.deep.include({ chainedCniPlugin: false, logLevel: 'debug', mountedCniNetDir: '/from/env', orchConfigPath: '/k' });
    expect(fromEnv.repair.enabled).to.equal(false);
    const fromFlags = resolve({ 'chained-cni-plugin': true, 'log-level': 'error', 'mounted-cni-net-dir': '/from/flag', 'repair-enabled': true }, env);
    expect(fromFlags).to.deep.include({ chainedCniPlugin: true, logLevel: 'error', mountedCniNetDir: '/from/flag' });
    expect(fromFlags.repair.enabled).to.equal(true);
    expect(fromFlags.sources['log-level']).to.equal('--log-level');
  });

  it('repair values are checked by the repair module, naming the flag or the setting that gave them', () => {
    expect(() => resolve({ 'repair-label-selectors': 'a in (' })).to.throw(RepairOptionsError, /^invalid --repair-label-selectors "a in \(":/);
    expect(() => resolve({}, { REPAIR_LABEL_SELECTORS: 'a in (' })).to.throw(RepairOptionsError, /^invalid REPAIR_LABEL_SELECTORS "a in \(":/);
    expect(() => resolve({}, { REPAIR_INIT_CONTAINER_EXIT_CODE: '300' })).to.throw(RepairOptionsError, /^invalid REPAIR_INIT_CONTAINER_EXIT_CODE 300:/);
    expect(resolve({}, { REPAIR_ENABLED: 'false', REPAIR_LABEL_SELECTORS: 'a in (' }).repair.enabled).to.equal(false);
  });

  it('a value parsed from a default but not given does not beat the setting', () => {
    const o = resolveInstallCniOptions({ values: { 'log-level': 'warn' }, given: new Set() }, new Settings('install-cni', { LOG_LEVEL: 'error' }));
    expect(o.logLevel).to.equal('error');
  });

  const bad: Array<[string, Record<string, unknown>, Record<string, string>, RegExp]> = [
    ['a file mode out of range, from the flag', { 'orchconfig-mode': 99999 }, {}, /^invalid --orchconfig-mode 99999: a file mode is a decimal integer from 0 to 4095 \(384 = 0600\)$/],
    ['a file mode out of range, from the setting', {}, { ORCHCONFIG_MODE: '-1' }, /^invalid ORCHCONFIG_MODE -1: /],
    ['an unknown log level', { 'log-level': 'loud' }, {}, /^invalid --log-level "loud": expected one of debug, info, warn, error, fatal, none$/],
    ['an unknown log level from LOG_LEVEL', {}, { LOG_LEVEL: 'verbose' }, /^invalid LOG_LEVEL "verbose"/],
    ['a port out of range', { 'monitoring-port': 70000 }, {}, /^invalid --monitoring-port 70000: a port is a number from 0 to 65535$/],
    ['a config name that is a path', { 'cni-conf-name': '../x.conflist' }, {}, /^invalid --cni-conf-name "\.\.\/x\.conflist": a file name inside MOUNTED_CNI_NET_DIR, not a path$/],
    ['a config name the runtime does not read', {}, { CNI_CONF_NAME: 'mesh.yaml' }, /^invalid CNI_CONF_NAME "mesh\.yaml": the container runtime only reads files ending in \.conf, \.conflist, \.json$/],
    ['an empty net dir', {}, { MOUNTED_CNI_NET_DIR: '' }, /^invalid MOUNTED_CNI_NET_DIR "": a directory is required$/],
  ];
  for (const [what, values, env, message] of bad) {
    it(`rejects ${what}, naming where it came from`, () => {
      expect(() => resolve(values, env)).to.throw(InstallOptionsError, message);
    });
  }
});

describe('install-cni: the plug-in config template', () => {
  const sources = { 'cni-network-config': '--cni-network-config', 'cni-network-config-file': 'CNI_NETWORK_CONFIG_FILE' } as never;

  it('substitutes every placeholder; strings are JSON-escaped, the ambient switch is a literal', () => {
    const text = substitutePlaceholders(
      '["__LOG_LEVEL__", "__CNI_AGENT_RUN_DIR__", "__POD_NAMESPACE__", "__NODE_NAME__", "__ORCHCONFIG_FILEPATH__", __AMBIENT_ENABLED__, "__OTHER__"]',
      { ...VALUES, cniAgentRunDir: 'C:\\odd "dir"' },
    );
    expect(JSON.parse(text)).to.deep.equal(['info', 'C:\\odd "dir"', 'mesh-system', 'n1', '/run/mesh/mesh-cni-orchconfig', true, '__OTHER__']);
  });

  it('takes the file over the string, the string over the built-in default', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-cni-tpl-'));
    try {
      const file = path.join(dir, 'tpl.json');
      fs.writeFileSync(file, '{"type": "mesh-cni", "from": "file"}');
      expect(readPluginTemplate({ cniNetworkConfigFile: file, cniNetworkConfig: '{"from": "string"}', sources }).text).to.contain('"file"');
      expect(readPluginTemplate({ cniNetworkConfigFile: '', cniNetworkConfig: '{"from": "string"}', sources })).to.deep.equal({ text: '{"from": "string"}', source: '--cni-network-config' });
      expect(readPluginTemplate({ cniNetworkConfigFile: '', cniNetworkConfig: '', sources }).source).to.equal(BUILT_IN_TEMPLATE_SOURCE);
      expect(() => readPluginTemplate({ cniNetworkConfigFile: path.join(dir, 'missing.json'), cniNetworkConfig: '', sources })).to.throw(
        CniConfigError,
        /^cannot read the CNI config template .*missing\.json \(CNI_NETWORK_CONFIG_FILE\): ENOENT/,
      );
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('writes --log-level as plugin_log_level only when the template has none', () => {
    expect(renderPluginConfig({ text: '{"type": "mesh-cni"}', source: 's' }, VALUES).plugin_log_level).to.equal('info');
    expect(renderPluginConfig({ text: '{"type": "mesh-cni", "plugin_log_level": "error"}', source: 's' }, VALUES).plugin_log_level).to.equal('error');
  });

  it('reports a template that does not render to JSON with its source, line and column', () => {
    const template = { text: '{\n  "type": "mesh-cni",\n  "ambient_enabled": "__AMBIENT_ENABLED__\n}', source: '--cni-network-config' };
    expect(() => renderPluginConfig(template, VALUES)).to.throw(CniConfigError, /^--cni-network-config: invalid JSON at line 3 column 27: control character in a string/);
  });
});

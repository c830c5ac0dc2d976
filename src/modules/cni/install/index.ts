export { CniInstaller, CniInstallerOptions, STANDALONE_CONF_NAME } from './installer';
export {
  CniConfigError,
  ExistingCniConfig,
  JsonObject,
  CHAINED_LIST_NAME,
  CHAINED_LIST_CNI_VERSION,
  parseExistingCniConfig,
  parseMeshPluginConfig,
  insertMeshPlugin,
  removeMeshPlugin,
  hasMeshPlugin,
  listsMeshPlugin,
  standaloneCniConfig,
  mergeCniConfigText,
} from './cni-config';
export { CNI_CONFIG_EXTENSIONS, cniConfigFiles, alternateConfigName, conflistNameFor } from './conf-dir';
export { formatCniJson, parseJsonText, JsonTextError } from './json-text';
export { writeFileAtomic, ensureFile } from './files';
export { LAUNCHER_MODE, launcherPath, launcherScript } from './launcher';
export { buildPluginOrchConfig, PluginOrchConfig, PluginOrchConfigOptions } from './plugin-orchconfig';
export {
  DEFAULT_PLUGIN_TEMPLATE,
  BUILT_IN_TEMPLATE_SOURCE,
  PluginConfigValues,
  PluginTemplate,
  readPluginTemplate,
  renderPluginConfig,
  substitutePlaceholders,
} from './plugin-config';
export {
  InstallCniOptions,
  InstallCniFlagInput,
  InstallCniFlagName,
  InstallOptionsError,
  INSTALL_CNI_FLAG_SETTINGS,
  resolveInstallCniOptions,
} from './options';
export { NodeComponent, startComponents, stopComponents, waitForStopSignal } from './components';
export { MetricsEndpoint } from './metrics-component';

export { Duration } from './duration';
export { CATALOGUE, FAMILIES, SettingName, SettingNameOfType } from './catalogue';
export { Environment, processEnvironment } from './environment';
export { parseSettingValue, defaultValue, SettingValueError } from './parse';
export { Settings, SettingsToken, ResolvedSetting } from './settings';
export * from './types';
export { settingsModule } from './module';

export { ConfigIssue, ConfigLocation, formatIssue } from './issues';
export { ConfigResource, resourceKey } from './resource';
export { FieldIssue, KindDefinition } from './kind';
export { KindRegistry, validateDocument } from './validate';
export { parseConfigText, ParseResult, ParsedResource } from './parse';
export { configFilesUnder } from './files';
export { KINDS } from './kinds';
export { configModule, KindRegistryToken } from './module';

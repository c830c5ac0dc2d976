export { loadOrchConfig, orchConfigFor, OrchConfigError } from './config';

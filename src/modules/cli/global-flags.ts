import { loggingFlags, vklogFlag } from '../logging/flags';
import { Program } from '../settings/types';
import { arrayFlag, stringFlag } from './flags';

/** meshctl's global flags (spec/03), accepted by every meshctl command. */
export const meshctlGlobalFlags = {
  as: stringFlag('username to impersonate for the operation; user could be a regular user or a service account in a namespace', { default: '' }),
  'as-group': arrayFlag('group to impersonate for the operation; this flag can be repeated to specify multiple groups', { default: [] }),
  'as-uid': stringFlag('UID to impersonate for the operation', { default: '' }),
  context: stringFlag('orchestrator configuration context', { default: '' }),
  meshNamespace: stringFlag('mesh system namespace', { char: 'i', default: 'mesh-system' }),
  orchconfig: stringFlag('orchestrator configuration file', { char: 'c', default: '' }),
  namespace: stringFlag('namespace', { char: 'n', default: '' }),
  ...vklogFlag,
};

/** Flags every command of a program accepts (spec/01, spec/02, spec/03). */
export const GLOBAL_FLAGS: Record<Program, Record<string, unknown>> = {
  meshctl: meshctlGlobalFlags,
  // pilot-discovery: --vklog everywhere; the logging flags only on `discovery`.
  'pilot-discovery': { ...vklogFlag },
  'pilot-agent': { ...loggingFlags, ...vklogFlag },
  'install-cni': { ...loggingFlags },
};

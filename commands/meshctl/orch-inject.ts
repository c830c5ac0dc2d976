import { command, NotYetImplementedCommand, stringFlag } from '../../src/modules/cli';
import { xdsConnectionFlags } from './flag-groups';

@command({
  program: 'meshctl',
  path: 'orch-inject',
  summary: 'Inject the sidecar into workload definitions; unsupported resources pass through unchanged',
  flags: {
    ...xdsConnectionFlags,
    filename: stringFlag('input definitions; - reads stdin', { char: 'f' }),
    injectConfigFile: stringFlag('injection config file; excludes --injectConfigMapName'),
    injectConfigMapName: stringFlag('config map holding the injection config (key "config"); excludes --injectConfigFile', {
      default: 'mesh-sidecar-injector',
    }),
    meshConfigFile: stringFlag('mesh config file; wins over --meshConfigMapName'),
    meshConfigMapName: stringFlag('config map holding the mesh config (key "mesh")', { default: 'mesh' }),
    operatorFileName: stringFlag('operator resource file to take the injection settings from'),
    output: stringFlag('file to write the injected definitions to', { char: 'o' }),
    revision: stringFlag('control plane revision whose injection config to use', { char: 'r' }),
    valuesFile: stringFlag('injection values file'),
    webhookConfig: stringFlag('injection webhook configuration to read', { default: 'mesh-sidecar-injector' }),
  },
})
export class OrchInject extends NotYetImplementedCommand {}

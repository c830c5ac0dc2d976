import * as path from 'node:path';

/** The plug-in's type name in CNI configs and its executable's name in the CNI bin directory. */
export const CNI_PLUGIN_TYPE = 'mesh-cni';

/** Entry point of the plug-in executable; the installer's launcher runs it with Node. */
export const CNI_PLUGIN_MAIN = path.resolve(__dirname, 'plugin', 'main.js');

/** File name, inside the plug-in's `cni_agent_run_dir`, of the orchestrator config the installer writes for it. */
export const PLUGIN_ORCHCONFIG_FILE = 'mesh-cni-orchconfig';

import * as path from 'node:path';
import { CNI_PLUGIN_TYPE } from '../plugin-location';

/** The plug-in executable's mode: the runtime runs it as root; others may read and run it. */
export const LAUNCHER_MODE = 0o755;

/** Where the runtime finds the plug-in: `<bin dir>/mesh-cni`, the `type` of its config entry. */
export function launcherPath(binDir: string): string {
  return path.join(binDir, CNI_PLUGIN_TYPE);
}

/**
 * The executable installed as the mesh plug-in. The incumbent copies a self-contained binary out
 * of its container image; we ship no image, so the launcher runs the plug-in of the installation
 * that wrote it, by absolute path. It finds `node` on the PATH the runtime passes to plug-ins.
 */
export function launcherScript(pluginMain: string): string {
  return [
    '#!/usr/bin/env node',
    `// The ${CNI_PLUGIN_TYPE} CNI plug-in, installed by install-cni.`,
    '// No container image ships a self-contained plug-in binary, so this launcher runs the',
    '// plug-in of the mesh installation that wrote it; reinstalling the mesh rewrites it.',
    "'use strict';",
    `require(${JSON.stringify(pluginMain)});`,
    '',
  ].join('\n');
}

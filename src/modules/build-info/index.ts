import * as fs from 'node:fs';
import * as path from 'node:path';
import { ContainerModule } from 'inversify';

/** What was built: printed by `version` on every program. */
export interface BuildInfo {
  version: string;
  revision: string;
  nodeVersion: string;
  status: string;
  tag: string;
}

export const BuildInfoToken = Symbol.for('mesh.BuildInfo');

/** The package root (holds package.json), from dist/src/modules/build-info or src/modules/build-info. */
export function packageRoot(): string {
  let dir = __dirname;
  while (!fs.existsSync(path.join(dir, 'package.json'))) {
    const up = path.dirname(dir);
    if (up === dir) throw new Error(`package.json not found above ${__dirname}`);
    dir = up;
  }
  return dir;
}

export function readBuildInfo(root = packageRoot()): BuildInfo {
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string };
  let recorded: Partial<BuildInfo> = {};
  try {
    recorded = JSON.parse(fs.readFileSync(path.join(root, 'dist', 'build-info.json'), 'utf8'));
  } catch {
    // Not built through `npm run build`: the version is still known.
  }
  return {
    version: pkg.version,
    revision: recorded.revision ?? 'unknown',
    nodeVersion: process.version,
    status: recorded.status ?? 'unknown',
    tag: recorded.tag ?? pkg.version,
  };
}

export function buildInfoModule(): ContainerModule {
  return new ContainerModule((bind) => {
    bind(BuildInfoToken).toDynamicValue(() => readBuildInfo()).inSingletonScope();
  });
}

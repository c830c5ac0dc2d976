/** `--from-version`: the control plane to upgrade is there, runs that version, and the step is one the mesh supports. */
import { UserError } from '../../shared/user-error';
import { CONTROL_PLANE_VERSION_MISMATCH, NO_CONTROL_PLANE_TO_UPGRADE, UNSUPPORTED_UPGRADE } from '../messages/catalogue';
import { Message, message } from '../messages/message';
import { InstalledControlPlane } from './control-plane';
import { compareVersions, formatVersion, MinorVersion, parseMinorVersion } from './versions';

/** Minor versions an upgrade may move at once (as the incumbent supports for canary upgrades). */
export const MAX_MINOR_STEP = 2;

export interface UpgradeInputs {
  fromVersion: string;
  /** This meshctl's version: what would be installed. */
  targetVersion: string;
  installed: readonly InstalledControlPlane[];
  meshNamespace: string;
  revision: string;
}

/** The `--from-version` value as a version; a UserError when it is not one. */
export function parseFromVersion(text: string): MinorVersion {
  const from = parseMinorVersion(text);
  if (!from) throw new UserError(`--from-version: invalid version ${JSON.stringify(text)}, expected a form like 1.0`);
  return from;
}

export function checkUpgrade(input: UpgradeInputs): Message[] {
  const from = parseFromVersion(input.fromVersion);
  const out: Message[] = [];
  const target = parseMinorVersion(input.targetVersion);
  if (target) {
    const step = stepProblem(from, target);
    if (step) out.push(message(UNSUPPORTED_UPGRADE, 'Cluster', formatVersion(from), formatVersion(target), step));
  }
  if (input.installed.length === 0) {
    out.push(message(NO_CONTROL_PLANE_TO_UPGRADE, 'Cluster', input.fromVersion, input.revision ? ` of revision ${input.revision}` : '', input.meshNamespace));
  }
  for (const cp of input.installed) {
    const running = parseMinorVersion(cp.version);
    if (running && compareVersions(running, from) !== 0) {
      out.push(message(CONTROL_PLANE_VERSION_MISMATCH, `Deployment ${cp.namespace}/${cp.name}`, cp.version, input.fromVersion));
    }
  }
  return out;
}

/** Why moving from `from` to `target` is not a supported upgrade, if it is not. */
function stepProblem(from: MinorVersion, target: MinorVersion): string | undefined {
  if (compareVersions(from, target) > 0) return 'is a downgrade, which precheck does not check';
  if (from.major !== target.major) return 'crosses a major version; upgrade to the last release of the old major version first';
  if (target.minor - from.minor > MAX_MINOR_STEP) return `skips more than ${MAX_MINOR_STEP} minor versions; upgrade through the versions in between`;
  return undefined;
}

/** The orchestrator's version against the oldest this mesh supports. */
import { OrchClient } from '../../orch';
import { UserError } from '../../shared/user-error';
import { UNSUPPORTED_ORCH_VERSION } from '../messages/catalogue';
import { Message, message } from '../messages/message';
import { compareVersions, formatVersion, MinorVersion, parseMinorVersion } from './versions';

/** The oldest orchestrator release the mesh runs on (the incumbent's minimum for this release line). */
export const MIN_ORCH_VERSION: MinorVersion = { major: 1, minor: 28 };

interface VersionInfo {
  major?: string;
  minor?: string;
  gitVersion?: string;
}

export async function checkOrchVersion(client: OrchClient): Promise<Message[]> {
  let info: VersionInfo;
  try {
    info = (await client.getJson('/version')) as VersionInfo;
  } catch (err) {
    throw new UserError(`reading the orchestrator version (/version) failed: ${(err as Error).message}`);
  }
  const gitVersion = typeof info?.gitVersion === 'string' ? info.gitVersion : '';
  // Some distributions append to minor ("27+"): the numbers are what count.
  const version = parseMinorVersion(gitVersion) ?? parseMinorVersion(`${parseInt(info?.major ?? '', 10)}.${parseInt(info?.minor ?? '', 10)}`);
  if (!version) throw new UserError(`the orchestrator API reports version ${JSON.stringify(gitVersion || info)}, which is not of the form v<major>.<minor>`);
  if (compareVersions(version, MIN_ORCH_VERSION) >= 0) return [];
  return [message(UNSUPPORTED_ORCH_VERSION, 'Cluster', gitVersion || formatVersion(version), formatVersion(MIN_ORCH_VERSION))];
}

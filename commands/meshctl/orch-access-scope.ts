import { CommandScope, withProgress } from '../../src/modules/cli';
import { OrchClientOptionsToken } from '../../src/modules/orch';
import { MeshctlOrchFlags, meshctlOrchOptions, OrchAccess } from '../../src/modules/orch-access';

/**
 * Runs `work` with the orchestrator reached as meshctl's global flags say, and closes every
 * forward and watch it opened afterwards, so the command can end. With `progress`, a spinner
 * says what it waits for (on a terminal only).
 */
export async function withOrchAccess<T>(scope: CommandScope, flags: MeshctlOrchFlags, work: (access: OrchAccess) => Promise<T>, progress?: string): Promise<T> {
  const access = scope.resolve(OrchAccess, [[OrchClientOptionsToken, meshctlOrchOptions(flags)]]);
  try {
    return progress ? await withProgress(progress, () => work(access)) : await work(access);
  } finally {
    await access.close();
  }
}

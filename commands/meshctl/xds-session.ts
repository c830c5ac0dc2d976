import { CommandScope, withProgress } from '../../src/modules/cli';
import { DaemonSession, OrchAccessReach, XdsConnectionFlags } from '../../src/modules/meshd-debug';
import { OrchClientOptionsToken } from '../../src/modules/orch';
import { meshctlOrchOptions, MeshctlOrchFlags, OrchAccess } from '../../src/modules/orch-access';

/**
 * How the xDS commands reach the control plane: the orchestrator (daemon pods, port-forwards,
 * tokens, the proxy's pod), made on first use with the global flags, so a command given
 * --xds-address and --cert-dir (and --file) never touches it; and a session with the daemons
 * the XDS-connection flags name. Both are closed when the work ends, however it ends.
 */
export async function withReach<T>(scope: CommandScope, flags: object, work: (reach: OrchAccessReach) => Promise<T>): Promise<T> {
  const reach = new OrchAccessReach(() => scope.resolve(OrchAccess, [[OrchClientOptionsToken, meshctlOrchOptions(flags as MeshctlOrchFlags)]]));
  try {
    return await work(reach);
  } finally {
    await reach.close();
  }
}

/** The command's flags that pick the daemons: the XDS-connection group, `--meshNamespace`, `--revision`. */
export type ControlPlaneFlags = XdsConnectionFlags & { meshNamespace: string; revision?: string };

export async function withSession<T>(reach: OrchAccessReach, flags: ControlPlaneFlags, work: (session: DaemonSession) => Promise<T>): Promise<T> {
  // Port-forwards and daemons can take a while: a spinner on a terminal says what is awaited.
  return withProgress('asking the control plane', async () => {
    const session = await DaemonSession.open({ flags, meshNamespace: flags.meshNamespace, revision: flags.revision || undefined, reach: () => reach });
    try {
      return await work(session);
    } finally {
      await session.close();
    }
  });
}

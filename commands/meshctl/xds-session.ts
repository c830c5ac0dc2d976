import { CommandScope } from '../../src/modules/cli';
import { OrchReach } from '../../src/modules/meshd-debug';
import { UserError } from '../../src/modules/shared/user-error';

/**
 * The orchestrator as the xDS commands reach it (daemon pods, port-forwards, tokens, the
 * proxy's pod), made on first use: a command given --xds-address and --cert-dir (and --file)
 * never touches it.
 */
export function controlPlaneReach(_scope: CommandScope, _flags: object): OrchReach {
  const unavailable = (): never => {
    throw new UserError('reaching the cluster through the orchestrator API is not available yet: give --xds-address with --cert-dir or --plaintext (and --file for one proxy)');
  };
  return { daemonPods: unavailable, forward: unavailable, token: unavailable, meshRoots: unavailable, resolvePod: unavailable, podGet: unavailable };
}

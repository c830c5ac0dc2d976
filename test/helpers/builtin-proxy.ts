import { createContainer } from '../../src/container';
import { BuiltInProxy } from '../../src/modules/proxy/builtin-proxy';
import { REPO_ROOT } from './run-cli';
import { assertSharedLoopbackNetworkHeld } from './shared-network';

/**
 * A built-in proxy resolved as `pilot-agent proxy` resolves it for `env`: with the filter
 * factories of the proxy's core and of the plugins that environment enables (and loads).
 */
export function builtInProxy(env: Record<string, string> = {}): BuiltInProxy {
  assertSharedLoopbackNetworkHeld('the built-in proxy');
  const { container } = createContainer({ program: 'pilot-agent', env, cwd: REPO_ROOT });
  return container.get(BuiltInProxy);
}

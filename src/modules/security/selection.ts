/** Which security policies apply to a workload (RequestAuthentication, AuthorizationPolicy, PeerAuthentication). */
import { ConfigResource } from '../config/resource';
import { PolicyScope } from '../config/kinds/request-authentication';
import { Proxy } from '../model/proxy';
import { PushContext } from '../model/push-context';
import { labelsMatch } from '../registry/model';

/**
 * Policies of `kind` in force for `proxy`: those of the root namespace and of the proxy's own
 * namespace whose selector is absent or matches the proxy's labels. Root-namespace policies come
 * first, then the namespace's; within each, by name, so generated config is stable.
 * Policies scoped by `targetRef(s)` attach to services or gateways, not to sidecars by label,
 * so they are left out here.
 */
export function policiesFor<S extends PolicyScope>(push: PushContext, proxy: Pick<Proxy, 'namespace' | 'labels'>, kind: string): ConfigResource<S>[] {
  const root = push.options.rootNamespace;
  const applies = (p: ConfigResource<S>) =>
    (p.metadata.namespace === root || p.metadata.namespace === proxy.namespace) &&
    !p.spec.targetRef &&
    !(p.spec.targetRefs && p.spec.targetRefs.length > 0) &&
    (!p.spec.selector?.matchLabels || labelsMatch(p.spec.selector.matchLabels, proxy.labels));
  const rank = (p: ConfigResource<S>) => (p.metadata.namespace === root ? 0 : 1);
  return push
    .resources<S>(kind)
    .filter(applies)
    .sort((a, b) => rank(a) - rank(b) || cmp(a.metadata.namespace, b.metadata.namespace) || cmp(a.metadata.name, b.metadata.name));
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

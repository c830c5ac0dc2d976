/** EDS of a sidecar: one ClusterLoadAssignment per requested outbound cluster. */
import { resourceKey } from '../../config/resource';
import { Proxy } from '../../model/proxy';
import { PushContext } from '../../model/push-context';
import { Service } from '../../registry/model';
import { encodeResource } from '../../model/body-interning';
import { sharedNameListId } from '../../model/name-lists';
import { TypeUrl } from '../../envoy/type-urls';
import { sharedList, XdsResource } from '../../model/generator';
import { buildLoadAssignment } from '../common';
import { outboundClusterName, parseClusterName } from '../../model/naming';
import { SidecarContext } from './options';
import { configKey, scopeHosts, SidecarScope, sidecarScope } from './scope';

/**
 * What a proxy gets reads its scope and the DestinationRules it sees (`configKey`) and the
 * names it asked for: proxies of one scope subscribed to the same names (a shared list, see
 * name-lists) share one answer per push.
 */
export function sidecarEndpoints(ctx: SidecarContext, push: PushContext, proxy: Proxy, names: readonly string[] | undefined): XdsResource[] {
  const scope = sidecarScope(push, proxy);
  const list = names === undefined ? '*' : listKey(names);
  if (list === undefined) return loadAssignments(ctx, push, proxy, scope, names);
  return push.memoize(`${ctx.memoPrefix}/eds-list/${configKey(push, proxy, scope)}/${list}`, () => sharedList(loadAssignments(ctx, push, proxy, scope, names)));
}

/** Names of up to this many clusters (an endpoint push's) are their own memo key. */
const NAMED_LIST_MAX = 8;

/** A memo key for `names`: a shared list's number, or the names of a short list; undefined otherwise. */
function listKey(names: readonly string[]): string | undefined {
  const shared = sharedNameListId(names);
  if (shared !== undefined) return String(shared);
  // JSON: a list of names never reads like a number.
  return names.length <= NAMED_LIST_MAX ? JSON.stringify(names) : undefined;
}

function loadAssignments(ctx: SidecarContext, push: PushContext, proxy: Proxy, scope: SidecarScope, names: readonly string[] | undefined): XdsResource[] {
  const inScope = scopeHosts(scope);
  const out: XdsResource[] = [];
  for (const name of names ?? edsClusterNames(push, proxy, scope)) {
    const parsed = parseClusterName(name);
    if (!parsed || parsed.direction !== 'outbound' || !inScope.has(parsed.host)) continue;
    // Only a subset's endpoints depend on the proxy (through the DestinationRule it sees).
    const dr = parsed.subset ? push.destinationRuleFor(parsed.host, proxy) : undefined;
    const body = push.cached('eds', `${ctx.memoPrefix}/${name}/${dr ? resourceKey(dr) : ''}`, [`host:${parsed.host}`], () => {
      const cla = buildLoadAssignment(push, proxy, name, ctx.endpoints);
      return cla ? encodeResource(TypeUrl.ClusterLoadAssignment, name, cla) : undefined;
    });
    if (body) out.push({ name, body });
  }
  return out;
}

/** The EDS clusters of the scope, for a wildcard EDS request. */
function edsClusterNames(push: PushContext, proxy: Proxy, scope: SidecarScope): string[] {
  const eds = (s: Service) => s.resolution === 'STATIC';
  return scope.services.filter(eds).flatMap((s) => {
    const subsets = ['', ...(push.destinationRuleFor(s.hostname, proxy)?.spec.subsets ?? []).map((x) => x.name)];
    return s.ports.flatMap((p) => subsets.map((sub) => outboundClusterName(p.number, sub, s.hostname)));
  });
}

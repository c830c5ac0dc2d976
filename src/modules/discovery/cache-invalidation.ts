import { ConfigChange, ConfigSnapshot } from '../config/store';
import { ConfigResource, resourceKey } from '../config/resource';
import { ChangeSet } from '../model/generator';
import { PushContextOptions, qualifyHost } from '../model/push-context';

/** Kinds whose effect on cached resources is tracked by tags; any other kind clears the cache. */
const TRACKED = new Set(['ServiceEntry', 'WorkloadEntry', 'DestinationRule', 'VirtualService', 'RequestAuthentication', 'AuthorizationPolicy', 'PeerAuthentication']);

/**
 * The xDS cache tags a batch of changes touches (see XdsCache): the hosts whose service,
 * endpoints, DestinationRule or VirtualService changed, `services` when any service
 * definition did, `address:<ip>` per workload address that joined, left or changed, and
 * `kind:<Kind>` per changed kind. `all` when the cache must be cleared.
 */
export function cacheInvalidation(
  changes: readonly ConfigChange[],
  diff: Pick<ChangeSet, 'services' | 'endpoints' | 'workloadAddresses'>,
  before: ConfigSnapshot,
  after: ConfigSnapshot,
  options: PushContextOptions,
): string[] | 'all' {
  if (changes.some((c) => !TRACKED.has(c.kind))) return 'all';
  const tags = new Set<string>();
  for (const c of changes) tags.add(`kind:${c.kind}`);
  if (diff.services.size > 0) tags.add('services');
  for (const h of [...diff.services, ...diff.endpoints]) tags.add(`host:${h}`);
  // A workload joining or leaving an address moves that proxy's own (inbound) config.
  for (const a of diff.workloadAddresses) tags.add(`address:${a}`);
  for (const c of changes) {
    if (c.kind !== 'DestinationRule' && c.kind !== 'VirtualService') continue;
    for (const r of [find(before, c), find(after, c)]) {
      if (!r) continue;
      const spec = r.spec as { host?: string; hosts?: string[] };
      for (const h of [...(spec.host ? [spec.host] : []), ...(spec.hosts ?? [])]) tags.add(`host:${qualifyHost(h, r.metadata.namespace, options.domain)}`);
    }
  }
  return [...tags];
}

function find(snapshot: ConfigSnapshot, change: ConfigChange): ConfigResource | undefined {
  return snapshot.get(change.kind)?.find((r) => resourceKey(r) === change.key);
}

import { WeakValueMap } from '../shared/weak-value-map';

/**
 * Resource names and subscriptions shared between proxies. Thousands of proxies subscribe
 * to the same thousands of names; decoded from each request they would be thousands of
 * copies. Interned, identical subscriptions are one Set (never edited in place) and each
 * name one string.
 */
const MAX_NAMES = 500_000;
const names = new Map<string, string>();
const sets = new WeakValueMap<string, Set<string>>();

export function internName(name: string): string {
  const known = names.get(name);
  if (known !== undefined) return known;
  // A client sending endless made-up names must not grow this table without bound.
  if (names.size < MAX_NAMES) names.set(name, name);
  return name;
}

/**
 * Sets by the shared list they were made from: requests decode the same names in the same
 * order to the same frozen list (envoy/discovery-requests), so a proxy asking what thousands
 * asked before costs one lookup, not a join of its names.
 */
const setsOfLists = new WeakMap<readonly string[], Set<string>>();
/** Keeps those lists alive as long as their set is (the decoder's table holds them weakly). */
const listsOfSets = new WeakMap<Set<string>, (readonly string[])[]>();
const MAX_LISTS_PER_SET = 8;

/** The shared Set with exactly these names (callers must not modify it). */
export function internNameSet(list: Iterable<string>): Set<string> {
  const frozenList = Array.isArray(list) && Object.isFrozen(list) ? (list as readonly string[]) : undefined;
  const known = frozenList && setsOfLists.get(frozenList);
  if (known) return known;
  const set = internByContent(list);
  if (frozenList) {
    setsOfLists.set(frozenList, set);
    const lists = listsOfSets.get(set);
    if (!lists) listsOfSets.set(set, [frozenList]);
    else if (lists.length < MAX_LISTS_PER_SET) lists.push(frozenList);
  }
  return set;
}

/** The set of `list` when `list` is a shared list already interned (a cheap check for unchanged subscriptions). */
export function internedSetOf(list: readonly string[]): Set<string> | undefined {
  return setsOfLists.get(list);
}

function internByContent(list: Iterable<string>): Set<string> {
  // Proxies send the same lists in the same order: try that order before sorting.
  const asGiven = Array.isArray(list) ? list.join('\n') : undefined;
  const seen = asGiven !== undefined ? sets.get(asGiven) : undefined;
  if (seen) return seen;
  const sorted = [...new Set(list)].map(internName).sort();
  const key = sorted.join('\n');
  let set = sets.get(key);
  if (!set) {
    set = new Set(sorted);
    sets.set(key, set);
  }
  if (asGiven !== undefined && asGiven !== key) sets.set(asGiven, set);
  return set;
}


/**
 * Subscriptions after a delta request's change, shared: every proxy whose subscription was
 * `current` and that makes the same change gets the same Set, computed once.
 */
const transitions = new WeakMap<Set<string>, Map<string, Set<string>>>();
const MAX_TRANSITIONS = 64;

export function changedSubscription(current: Set<string>, subscribe: readonly string[], unsubscribe: readonly string[]): Set<string> {
  const change = `${subscribe.join('\n')}\u0000${unsubscribe.join('\n')}`;
  let known = transitions.get(current);
  const hit = known?.get(change);
  if (hit) return hit;
  const next = new Set(current);
  for (const n of subscribe) if (n !== '*') next.add(n);
  for (const n of unsubscribe) next.delete(n);
  const result = internNameSet(next);
  if (!known) transitions.set(current, (known = new Map()));
  if (known.size < MAX_TRANSITIONS) known.set(change, result);
  return result;
}

/**
 * The names of `requested` not in `current`, as a shared Set: proxies that subscribe to the
 * same new names (after a push added a cluster, every proxy asks for its endpoints) get the
 * same Set, so what is generated for those names is worked out once for all of them (the
 * response planner's lists and the generators' memos go by identity). Empty when nothing is new.
 */
export function newlySubscribed(current: ReadonlySet<string>, requested: readonly string[] | ReadonlySet<string>): Set<string> {
  const list = Array.isArray(requested) ? (requested as readonly string[]) : undefined;
  // The usual case: every name asked for is new, and a decoded request's list is shared already.
  if (list && list.every((n) => n !== '*' && !current.has(n))) return internNameSet(list);
  const added: string[] = [];
  for (const n of requested) if (n !== '*' && !current.has(n)) added.push(n);
  return internNameSet(added);
}

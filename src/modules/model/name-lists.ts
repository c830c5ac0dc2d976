/**
 * One list per subscription: thousands of proxies subscribe to the same names (interned as one
 * Set, never edited in place), and the list generated from that Set is handed to generators as
 * the same array each time, numbered, so a generator can share what it builds for it between
 * every proxy of one scope that subscribed to exactly these names.
 */
const lists = new WeakMap<ReadonlySet<string>, readonly string[]>();
const ids = new WeakMap<readonly string[], number>();
let nextId = 0;

/** The shared list of a subscription's names (the Set must never be modified afterwards). */
export function sharedNameList(subscription: ReadonlySet<string>): readonly string[] {
  let list = lists.get(subscription);
  if (!list) {
    list = Object.freeze([...subscription]);
    lists.set(subscription, list);
    ids.set(list, nextId++);
  }
  return list;
}

/** The number of a list from `sharedNameList`; undefined for any other list. */
export function sharedNameListId(list: readonly string[]): number | undefined {
  return ids.get(list);
}

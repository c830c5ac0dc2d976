/**
 * Resource names and subscriptions shared between proxies. Thousands of proxies subscribe
 * to the same thousands of names; decoded from each request they would be thousands of
 * copies. Interned, identical subscriptions are one Set (never edited in place) and each
 * name one string.
 */
const MAX_NAMES = 500_000;
const names = new Map<string, string>();
const sets = new Map<string, WeakRef<Set<string>>>();
const forget = new FinalizationRegistry<string>((key) => {
  if (sets.get(key)?.deref() === undefined) sets.delete(key);
});

export function internName(name: string): string {
  const known = names.get(name);
  if (known !== undefined) return known;
  // A client sending endless made-up names must not grow this table without bound.
  if (names.size < MAX_NAMES) names.set(name, name);
  return name;
}

/** The shared Set with exactly these names (callers must not modify it). */
export function internNameSet(list: Iterable<string>): Set<string> {
  const sorted = [...new Set(list)].map(internName).sort();
  const key = sorted.join('\n');
  const known = sets.get(key)?.deref();
  if (known) return known;
  const set = new Set(sorted);
  sets.set(key, new WeakRef(set));
  forget.register(set, key);
  return set;
}

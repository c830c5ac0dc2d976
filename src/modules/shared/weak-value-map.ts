/**
 * A map whose values are held weakly: an entry goes once its value has been collected. For
 * the tables that hand one shared object to everyone asking for the same thing (interned name
 * sets, shared name indexes, decoded name lists) without keeping what nobody uses any more, so
 * they follow what is in use now and a client sending endless new keys cannot grow them.
 */
export class WeakValueMap<K, V extends object> {
  private readonly entries = new Map<K, WeakRef<V>>();
  private readonly forget = new FinalizationRegistry<K>((key) => {
    // The key may hold a newer value by now: only a collected one's entry goes.
    if (this.entries.get(key)?.deref() === undefined) this.entries.delete(key);
  });

  get(key: K): V | undefined {
    return this.entries.get(key)?.deref();
  }

  set(key: K, value: V): void {
    this.entries.set(key, new WeakRef(value));
    this.forget.register(value, key);
  }

  /** Entries, including any whose value was collected but not yet forgotten. */
  get size(): number {
    return this.entries.size;
  }
}

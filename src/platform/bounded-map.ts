/** A Map that holds at most `limit` entries, the least recently set or read dropped first. */
export class BoundedMap<K, V> {
  private readonly entries = new Map<K, V>();

  constructor(readonly limit: number) {}

  get size(): number {
    return this.entries.size;
  }

  get(key: K): V | undefined {
    const value = this.entries.get(key);
    if (value === undefined) return undefined;
    // Re-inserted: Map iterates in insertion order, so the oldest is the least recently used.
    this.entries.delete(key);
    this.entries.set(key, value);
    return value;
  }

  /** Without marking it used. */
  peek(key: K): V | undefined {
    return this.entries.get(key);
  }

  set(key: K, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    while (this.entries.size > this.limit) this.entries.delete(this.entries.keys().next().value as K);
  }

  /** A new value for a key held, in its place in the order; nothing when it is not held. */
  replace(key: K, value: V): void {
    if (this.entries.has(key)) this.entries.set(key, value);
  }

  all(): IterableIterator<[K, V]> {
    return this.entries.entries();
  }

  delete(key: K): void {
    this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }
}

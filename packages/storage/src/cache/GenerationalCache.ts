/**
 * A bounded cache as two generations of plain Maps: entries go into the young generation; when its weight
 * reaches half the capacity it becomes the old one and the previous old one is dropped whole. A hit in the
 * old generation moves the entry to the young one, so what is in use survives; a hit in the young one costs
 * a single Map lookup and no bookkeeping.
 *
 * Why not an exact LRU over one Map (delete + re-insert on every hit, evict with `keys().next()`): every
 * hit then leaves a deleted slot behind, V8 must step over those at the head of the table on every eviction
 * until it rehashes, and the re-insert costs as much as the lookup. That bookkeeping was a fifth of a
 * cached stream read; here every operation is O(1) and a young hit is one `get`.
 *
 * Only `set` evicts (a `get` never drops an entry). The weight held stays within the capacity plus two values
 * (each generation may pass half the capacity by the value that made it rotate). Capacity is in weight units (bytes for block caches, entries when every weight is 1). Values are never
 * undefined.
 */
export class GenerationalCache<K, V> {
  private young = new Map<K, V>()
  private old = new Map<K, V>()
  private youngWeight = 0
  private oldWeight = 0
  private readonly generationWeight: number

  constructor(
    readonly capacity: number,
    private readonly weigh: (value: V) => number = () => 1
  ) {
    this.generationWeight = Math.max(1, Math.floor(capacity / 2))
  }

  get(key: K): V | undefined {
    const value = this.young.get(key)
    if (value !== undefined) return value
    const aged = this.old.get(key)
    if (aged !== undefined) {
      const w = this.weigh(aged)
      // Promotion never rotates the generations: a lookup must not evict entries a caller has just seen
      // (table scans check that every block is cached, then read them). It only moves an entry while the
      // young generation has room, so neither generation passes half the capacity by more than one value.
      if (this.youngWeight + w <= this.generationWeight) {
        this.old.delete(key)
        this.oldWeight -= w
        this.young.set(key, aged)
        this.youngWeight += w
      }
    }
    return aged
  }

  /** Looks without refreshing the entry (for probes that must not keep an entry alive). */
  peek(key: K): V | undefined {
    const value = this.young.get(key)
    return value !== undefined ? value : this.old.get(key)
  }

  set(key: K, value: V): void {
    if (this.weigh(value) > this.capacity) return
    const previous = this.young.get(key)
    if (previous !== undefined) this.youngWeight -= this.weigh(previous)
    const aged = this.old.get(key)
    if (aged !== undefined) {
      this.old.delete(key)
      this.oldWeight -= this.weigh(aged)
    }
    this.insertYoung(key, value)
  }

  delete(key: K): void {
    const young = this.young.get(key)
    if (young !== undefined) {
      this.young.delete(key)
      this.youngWeight -= this.weigh(young)
    }
    const aged = this.old.get(key)
    if (aged !== undefined) {
      this.old.delete(key)
      this.oldWeight -= this.weigh(aged)
    }
  }

  /** Removes every entry whose key matches (rare: a file replaced or dropped). */
  deleteWhere(matches: (key: K) => boolean): void {
    for (const key of [...this.young.keys(), ...this.old.keys()]) if (matches(key)) this.delete(key)
  }

  clear(): void {
    this.young = new Map()
    this.old = new Map()
    this.youngWeight = 0
    this.oldWeight = 0
  }

  get weight(): number {
    return this.youngWeight + this.oldWeight
  }

  get size(): number {
    return this.young.size + this.old.size
  }

  private insertYoung(key: K, value: V): void {
    this.young.set(key, value)
    this.youngWeight += this.weigh(value)
    if (this.youngWeight >= this.generationWeight) this.rotate()
  }

  private rotate(): void {
    this.old = this.young
    this.oldWeight = this.youngWeight
    this.young = new Map()
    this.youngWeight = 0
  }
}

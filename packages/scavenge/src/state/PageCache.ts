/**
 * The cache of decoded snapshot pages: least recently used first out, bounded in (estimated) bytes. One
 * cache serves both tables of a snapshot file; each table keeps its typed pages (`CachedPages`) and the
 * cache keeps the shared order and byte count, so no page is stored as an untyped value.
 */

/** A page's rows, ascending by name, and its estimated heap bytes. */
export interface DecodedPage<V> {
  readonly names: ReadonlyArray<string>
  readonly values: ReadonlyArray<V>
  readonly bytes: number
}

interface Entry {
  readonly bytes: number
  readonly drop: () => void
}

export class PageCache {
  private readonly order = new Map<number, Entry>()
  private total = 0

  get bytes(): number {
    return this.total
  }

  get pages(): number {
    return this.order.size
  }

  /** Marks the entry most recently used. */
  touch(key: number): void {
    const entry = this.order.get(key)
    if (entry === undefined) return
    this.order.delete(key)
    this.order.set(key, entry)
  }

  insert(key: number, bytes: number, drop: () => void): void {
    this.remove(key)
    this.order.set(key, { bytes, drop })
    this.total += bytes
  }

  remove(key: number): void {
    const entry = this.order.get(key)
    if (entry === undefined) return
    this.order.delete(key)
    this.total -= entry.bytes
    entry.drop()
  }

  /** Evicts least recently used pages until the cache holds at most `limit` bytes. */
  evictTo(limit: number): void {
    for (const key of this.order.keys()) {
      if (this.total <= limit) return
      this.remove(key)
    }
  }

  clear(): void {
    this.evictTo(-1)
  }
}

/** One table's pages in a shared cache. */
export class CachedPages<V> {
  private readonly pages = new Map<number, DecodedPage<V>>()

  constructor(
    private readonly cache: PageCache,
    private readonly tableId: 0 | 1
  ) {}

  private key(index: number): number {
    return index * 2 + this.tableId
  }

  get(index: number): DecodedPage<V> | undefined {
    const page = this.pages.get(index)
    if (page !== undefined) this.cache.touch(this.key(index))
    return page
  }

  /** Caches the page unless that would take the cache past `limit` with nothing older left to evict. */
  put(index: number, page: DecodedPage<V>, limit: number): void {
    if (page.bytes > limit) return
    this.cache.evictTo(limit - page.bytes)
    if (this.cache.bytes + page.bytes > limit) return
    this.pages.set(index, page)
    this.cache.insert(this.key(index), page.bytes, () => this.pages.delete(index))
  }
}

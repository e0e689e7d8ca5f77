/**
 * An LRU cache of table blocks (entriesPerBlock × 24 bytes, as u32 words), bounded in bytes and shared by all tables of
 * one index, so a hot stream's lookups cost no disk read. Keys are numbers (table id × 2^24 + block):
 * no string building on the lookup path. A JS Map keeps insertion order, which is the LRU order once a hit
 * re-inserts its key.
 */
const STRIDE = 0x1000000

/** Rough per-entry cost of the Map slot and the Buffer object, for the memory estimate. */
const ENTRY_OVERHEAD = 160

export class BlockCache {
  private readonly blocks = new Map<number, Uint32Array>()
  private used = 0
  hits = 0
  misses = 0

  constructor(readonly capacityBytes: number) {}

  get(tableId: number, block: number): Uint32Array | undefined {
    const key = tableId * STRIDE + block
    const buf = this.blocks.get(key)
    if (buf === undefined) {
      this.misses++
      return undefined
    }
    this.hits++
    this.blocks.delete(key)
    this.blocks.set(key, buf)
    return buf
  }

  put(tableId: number, block: number, buf: Uint32Array): void {
    if (buf.byteLength > this.capacityBytes) return
    const key = tableId * STRIDE + block
    const old = this.blocks.get(key)
    if (old !== undefined) {
      this.blocks.delete(key)
      this.used -= old.byteLength
    }
    this.blocks.set(key, buf)
    this.used += buf.byteLength
    while (this.used > this.capacityBytes) {
      const first = this.blocks.entries().next()
      if (first.done === true) break
      this.blocks.delete(first.value[0])
      this.used -= first.value[1].byteLength
    }
  }

  /** Forgets a table's blocks (it was merged away), so they stop counting as resident memory. */
  dropTable(tableId: number): void {
    for (const [key, buf] of this.blocks) {
      if (Math.floor(key / STRIDE) === tableId) {
        this.blocks.delete(key)
        this.used -= buf.byteLength
      }
    }
  }

  /** Bytes held, including an estimate of the per-block bookkeeping. */
  residentBytes(): number {
    return this.used + this.blocks.size * ENTRY_OVERHEAD
  }

  get size(): number {
    return this.blocks.size
  }
}

/**
 * A cache of table blocks (entriesPerBlock × 24 bytes, as u32 words), bounded in bytes and shared by all
 * tables of one index, so a hot stream's lookups cost no disk read. Keys are numbers (table id × 2^24 +
 * block): no string building on the lookup path. Eviction is generational (see GenerationalCache).
 */
import { GenerationalCache } from "../cache/GenerationalCache.js"

const STRIDE = 0x1000000

/** Rough per-entry cost of the Map slot and the typed-array object, for the memory estimate. */
const ENTRY_OVERHEAD = 160

export class BlockCache {
  private readonly blocks: GenerationalCache<number, Uint32Array>
  hits = 0
  misses = 0

  constructor(readonly capacityBytes: number) {
    this.blocks = new GenerationalCache(capacityBytes, (buf) => buf.byteLength)
  }

  get(tableId: number, block: number): Uint32Array | undefined {
    const buf = this.blocks.get(tableId * STRIDE + block)
    if (buf === undefined) this.misses++
    else this.hits++
    return buf
  }

  put(tableId: number, block: number, buf: Uint32Array): void {
    this.blocks.set(tableId * STRIDE + block, buf)
  }

  /** Forgets a table's blocks (it was merged away), so they stop counting as resident memory. */
  dropTable(tableId: number): void {
    this.blocks.deleteWhere((key) => Math.floor(key / STRIDE) === tableId)
  }

  /** Bytes held, including an estimate of the per-block bookkeeping. */
  residentBytes(): number {
    return this.blocks.weight + this.blocks.size * ENTRY_OVERHEAD
  }

  get size(): number {
    return this.blocks.size
  }
}

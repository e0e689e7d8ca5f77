/**
 * One table's delta: the rows committed since the snapshot (what the journal holds), the layer between the
 * snapshot and a transaction. A wholesale deletion is kept as a mask over the snapshot's rows (they are not
 * read); delta rows it matches become deletions.
 *
 * Exact counts without reading the snapshot: each delta row remembers the code of the snapshot row it
 * shadows (`base`, 0 = none, resolved by the commit that first touched the name). Visible rows per code c
 * are then (c hidden by the mask ? 0 : snapshot rows of code c − delta rows shadowing one of code c) +
 * delta rows whose value has code c.
 */
import { DELTA_ROW_BYTES, hiddenBy, MAP_ENTRY_BYTES, nameBytes, type RowLayer, type TableSpec } from "./tables.js"

interface DeltaRow<V> {
  value: V | null
  readonly base: number
}

export class DeltaTable<V> implements RowLayer<V> {
  private readonly rows = new Map<string, DeltaRow<V>>()
  private mask = 0
  private total = 0
  private sorted: Array<string> | undefined
  private counted: Array<number> | undefined

  constructor(readonly spec: TableSpec<V>) {}

  get hideMask(): number {
    return this.mask
  }

  /** Estimated heap bytes (tables.ts). */
  get bytes(): number {
    return this.total
  }

  get size(): number {
    return this.rows.size
  }

  readonly row = (name: string): V | null | undefined => this.rows.get(name)?.value

  readonly has = (name: string): boolean => this.rows.has(name)

  readonly sortedNames = (): ReadonlyArray<string> => (this.sorted ??= [...this.rows.keys()].sort())

  /** Applies a committed change: the wholesale deletion `mask` first, then the rows. */
  apply(mask: number, rows: ReadonlyMap<string, V | null>, baseOf: (name: string) => number): void {
    this.counted = undefined
    if (mask !== 0) {
      for (const row of this.rows.values()) {
        if (row.value !== null && hiddenBy(this.spec, mask, row.value)) {
          row.value = null
          this.total -= this.spec.valueBytes
        }
      }
      this.mask |= mask
    }
    for (const [name, value] of rows) {
      const row = this.rows.get(name)
      this.total += value === null ? 0 : this.spec.valueBytes
      if (row === undefined) {
        this.rows.set(name, { value, base: baseOf(name) })
        this.total += nameBytes(name) + MAP_ENTRY_BYTES + DELTA_ROW_BYTES
        this.sorted = undefined
      } else {
        if (row.value !== null) this.total -= this.spec.valueBytes
        row.value = value
      }
    }
  }

  /** Visible rows per code (index 0 unused), given the snapshot's. */
  counts(snapshotCounts: ReadonlyArray<number>): ReadonlyArray<number> {
    if (this.counted !== undefined) return this.counted
    const out = snapshotCounts.map((n, code) => (code === 0 || (this.mask & (1 << code)) !== 0 ? 0 : n))
    for (const row of this.rows.values()) {
      if (row.base !== 0 && (this.mask & (1 << row.base)) === 0) out[row.base]!--
      if (row.value !== null) out[this.spec.codeOf(row.value)]!++
    }
    return (this.counted = out)
  }

  /** Iterates the rows (for compaction's bookkeeping). */
  entries(): IterableIterator<[string, DeltaRow<V>]> {
    return this.rows.entries()
  }

  clear(): void {
    this.rows.clear()
    this.mask = 0
    this.total = 0
    this.sorted = undefined
    this.counted = undefined
  }
}

/**
 * An ordered walk over one table as some layers see it (the delta, and a transaction's overlay for
 * read-your-writes walks): the snapshot's pages one at a time, merged with the layers' names, so memory
 * stays one page plus the layers' sorted names whatever the table's size. One Effect per page, not per row.
 * If the table changes between two pages (a commit or a compaction), the walk picks up after the last
 * name it looked at, over the new state.
 */
import type { DiskError } from "@vellum/platform"
import { Effect } from "effect"
import type { DecodedPage } from "./PageCache.js"
import type { PagedTable } from "./PagedTable.js"
import type { SnapshotTable } from "./SnapshotTable.js"
import { BELOW, decideAbove, mergeNames, passUp, type RowLayer } from "./tables.js"
import type { StateCorrupt } from "./types.js"

export class TableCursor<V> {
  private snapshot: SnapshotTable<V> | undefined
  private version = -1
  private layers: ReadonlyArray<RowLayer<V>> = []
  private upper: ReadonlyArray<string> = []
  private u = 0
  private page = 0
  private finished = false
  /** The greatest name looked at so far. */
  private last: string | undefined

  constructor(
    private readonly table: PagedTable<V>,
    /** Layers above the delta, top first. */
    private readonly above: ReadonlyArray<RowLayer<V>>,
    private readonly after: string | undefined,
    /** Keep the pages read in the page cache (a walk the caller follows with lookups), or not (a full scan). */
    private readonly caching: boolean
  ) {}

  private start(): SnapshotTable<V> {
    const snapshot = this.table.snapshot
    this.snapshot = snapshot
    this.version = this.table.version
    this.layers = [...this.above, this.table.delta]
    const from = this.last ?? this.after
    const names = mergeNames(this.layers.map((l) => l.sortedNames()))
    this.upper = from === undefined ? names : names.filter((n) => n > from)
    this.u = 0
    this.page = from === undefined ? 0 : Math.max(0, snapshot.pageOf(from))
    return snapshot
  }

  /** The next rows in name order (possibly none), or undefined once the walk is over. */
  nextBatch(): Effect.Effect<Array<readonly [string, V]> | undefined, DiskError | StateCorrupt> {
    return Effect.suspend(() => {
      if (this.finished) return Effect.succeed(undefined)
      const snapshot = this.version === this.table.version && this.snapshot !== undefined ? this.snapshot : this.start()
      if (this.page >= snapshot.pageCount) {
        const out: Array<readonly [string, V]> = []
        this.emitUpperBefore(undefined, out)
        this.finished = true
        return Effect.succeed(out)
      }
      const index = this.page
      return Effect.map(snapshot.page(index, this.caching), (rows) => {
        // The table changed during the read: the next call starts over after `last`.
        if (this.version !== this.table.version) return []
        const out: Array<readonly [string, V]> = []
        this.mergePage(rows, index + 1 < snapshot.pageCount ? snapshot.firstKey(index + 1) : undefined, out)
        this.page = index + 1
        if (this.page >= snapshot.pageCount) this.finished = true
        return out
      })
    })
  }

  private mergePage(rows: DecodedPage<V>, limit: string | undefined, out: Array<readonly [string, V]>): void {
    const from = this.last ?? this.after
    for (let i = 0; i < rows.names.length; i++) {
      const name = rows.names[i]!
      if (from !== undefined && name <= from) continue
      this.emitUpperBefore(name, out)
      if (this.upper[this.u] === name) this.u++
      this.emit(name, rows.values[i], out)
    }
    this.emitUpperBefore(limit, out)
  }

  /** Emits the layers' names before `limit` (all when undefined): none of them is in the snapshot. */
  private emitUpperBefore(limit: string | undefined, out: Array<readonly [string, V]>): void {
    while (this.u < this.upper.length && (limit === undefined || this.upper[this.u]! < limit))
      this.emit(this.upper[this.u++]!, undefined, out)
  }

  private emit(name: string, snapshotValue: V | undefined, out: Array<readonly [string, V]>): void {
    this.last = name
    const spec = this.table.spec
    const decided = decideAbove(spec, this.layers, name)
    const value = decided === BELOW ? passUp(spec, this.layers, snapshotValue) : decided
    if (value !== undefined) out.push([name, value])
  }
}

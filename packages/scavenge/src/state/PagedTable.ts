/**
 * One name-keyed table of the committed state: the snapshot's pages (SnapshotTable.ts) under the delta
 * (DeltaTable.ts). `peek` answers without I/O or says NotResident; `get` reads the page when needed. `version` changes whenever the committed rows or the
 * snapshot change, so a walk (TableCursor.ts) or a read that spanned I/O knows to look again.
 */
import type { DiskError } from "@vellum/platform"
import { Effect } from "effect"
import { DeltaTable } from "./DeltaTable.js"
import type { SnapshotTable } from "./SnapshotTable.js"
import { hiddenBy, type TableSpec } from "./tables.js"
import { NotResident, type StateCorrupt } from "./types.js"

export class PagedTable<V> {
  readonly delta: DeltaTable<V>
  private generation = 0
  private changes = 0
  /** Compaction's bookkeeping (compaction.ts): pages and rows of the last full write. */
  compactions = { pagesAtFull: 0, rowsAtFull: 0 }

  constructor(
    readonly spec: TableSpec<V>,
    private current: SnapshotTable<V>
  ) {
    this.delta = new DeltaTable(spec)
  }

  get snapshot(): SnapshotTable<V> {
    return this.current
  }

  /** Changes with every commit applied and every snapshot swapped in. */
  get version(): number {
    return this.changes
  }

  /** A snapshot value as the delta lets it through. */
  private throughDelta(value: V | undefined): V | undefined {
    return value !== undefined && hiddenBy(this.spec, this.delta.hideMask, value) ? undefined : value
  }

  /** The committed value given the snapshot's (which must be of the current snapshot). */
  private resolve(name: string, snapshotValue: V | undefined): V | undefined {
    const row = this.delta.row(name)
    return row !== undefined ? (row ?? undefined) : this.throughDelta(snapshotValue)
  }

  /**
   * The committed value without I/O, or NotResident. `onBase` learns the code of the snapshot's row when
   * the answer came from the snapshot (a commit of the name then needs no read to keep the counts exact).
   */
  peek(name: string, onBase?: (code: number) => void): V | undefined | NotResident {
    const row = this.delta.row(name)
    if (row !== undefined) return row ?? undefined
    const value = this.current.peek(name)
    if (value === NotResident) return NotResident
    onBase?.(value === undefined ? 0 : this.spec.codeOf(value))
    return this.throughDelta(value)
  }

  get(name: string, onBase?: (code: number) => void): Effect.Effect<V | undefined, DiskError | StateCorrupt> {
    return Effect.suspend(() => {
      const peeked = this.peek(name, onBase)
      if (peeked !== NotResident) return Effect.succeed(peeked)
      const generation = this.generation
      // A compaction that swapped the snapshot during the read makes the page's value meaningless: again.
      return Effect.flatMap(this.current.get(name), (value) => {
        if (generation !== this.generation) return this.get(name, onBase)
        if (this.delta.row(name) === undefined) onBase?.(value === undefined ? 0 : this.spec.codeOf(value))
        return Effect.succeed(this.resolve(name, value))
      })
    })
  }

  /** The code of the snapshot's own row for `name` (0 when none), for the delta's counts. */
  snapshotCode(name: string): Effect.Effect<number, DiskError | StateCorrupt> {
    if (this.delta.has(name)) return Effect.succeed(0) // already known to the delta, which keeps its first base
    return Effect.map(this.current.get(name), (value) => (value === undefined ? 0 : this.spec.codeOf(value)))
  }

  apply(mask: number, rows: ReadonlyMap<string, V | null>, bases: ReadonlyMap<string, number>): void {
    this.delta.apply(mask, rows, (name) => bases.get(name) ?? 0)
    this.changes++
  }

  /** Row counts per code (index 0 unused). */
  counts(): ReadonlyArray<number> {
    return this.delta.counts(this.current.directory.codeCounts)
  }

  /** Row counts per code once `rows` are committed (`bases`: the snapshot codes of names the delta lacks). */
  countsAfter(rows: ReadonlyMap<string, V | null>, bases: ReadonlyMap<string, number>): ReadonlyArray<number> {
    const out = [...this.counts()]
    for (const [name, value] of rows) {
      const row = this.delta.row(name)
      const base = bases.get(name) ?? 0
      const before =
        row !== undefined
          ? row === null
            ? 0
            : this.spec.codeOf(row)
          : (this.delta.hideMask & (1 << base)) !== 0
            ? 0
            : base
      if (before !== 0) out[before]!--
      if (value !== null) out[this.spec.codeOf(value)]!++
    }
    return out
  }

  /** Installs the snapshot a compaction wrote, which holds the delta: the delta starts afresh. */
  swap(snapshot: SnapshotTable<V>): void {
    this.current = snapshot
    this.delta.clear()
    this.generation++
    this.changes++
  }
}

/**
 * The committed scavenge state in memory: the per-chunk tables and the checkpoint (resident: they grow with
 * logical chunks, not streams), the two name-keyed tables (PagedTable.ts: snapshot pages and delta) and
 * the page cache they share, bounded so that page cache + delta ≤ `cacheBytes`.
 */
import type { DiskError, FileHandle } from "@vellum/platform"
import { Effect } from "effect"
import { CachedPages, PageCache } from "./PageCache.js"
import { PagedTable } from "./PagedTable.js"
import { directoryBytes, emptyTableDirectory, type SnapshotDirectory } from "./pageFile.js"
import { SnapshotTable, type SnapshotSource } from "./SnapshotTable.js"
import { TableCursor } from "./TableCursor.js"
import {
  ACTIVE_CODE,
  ALL_METASTREAMS_MASK,
  DELTA_ROW_BYTES,
  MAP_ENTRY_BYTES,
  METASTREAMS,
  nameBytes,
  ORIGINALS,
  spentMask,
  type RowLayer,
  type TableSpec
} from "./tables.js"
import type {
  Checkpoint,
  ChunkTimeRange,
  ChunkWeight,
  MetastreamData,
  OriginalStreamData,
  StateChange,
  StateCorrupt
} from "./types.js"
import { NotResident } from "./types.js"

/** The snapshot files' tables, ready to be installed (at open, or by a compaction). */
export interface LoadedSnapshot {
  readonly handle: FileHandle | undefined
  readonly directory: SnapshotDirectory
  /** The cache, with whatever pages the compaction kept while writing them. */
  readonly cache: PageCache
  readonly originals: CachedPages<OriginalStreamData>
  readonly metastreams: CachedPages<MetastreamData>
}

export const emptySnapshot = (): LoadedSnapshot => {
  const cache = new PageCache()
  return {
    handle: undefined,
    directory: {
      seq: 0,
      checkpoint: undefined,
      weights: new Map(),
      timeRanges: new Map(),
      fileBytes: 0,
      originals: emptyTableDirectory(ORIGINALS.codes),
      metastreams: emptyTableDirectory(METASTREAMS.codes)
    },
    cache,
    originals: new CachedPages(cache, ORIGINALS.id),
    metastreams: new CachedPages(cache, METASTREAMS.id)
  }
}

/** Snapshot codes of the rows a change touches that the delta does not know yet. */
export interface Bases {
  readonly originals: ReadonlyMap<string, number>
  readonly metastreams: ReadonlyMap<string, number>
}

type StateError = DiskError | StateCorrupt

export class CommittedState {
  checkpoint: Checkpoint | undefined
  readonly weights: Map<number, number>
  readonly timeRanges: Map<number, ChunkTimeRange>
  readonly originals: PagedTable<OriginalStreamData>
  readonly metastreams: PagedTable<MetastreamData>
  private snapshot: LoadedSnapshot
  private indexBytes: number
  /** Bytes of pages a running compaction keeps for the next snapshot's cache. */
  private pendingCacheBytes = 0

  constructor(
    readonly cacheBytes: number,
    loaded: LoadedSnapshot
  ) {
    this.snapshot = loaded
    this.checkpoint = loaded.directory.checkpoint
    this.weights = new Map(loaded.directory.weights)
    this.timeRanges = new Map(loaded.directory.timeRanges)
    this.indexBytes = directoryBytes(loaded.directory)
    this.originals = new PagedTable(ORIGINALS, this.tableOf(ORIGINALS, loaded, loaded.originals))
    this.metastreams = new PagedTable(METASTREAMS, this.tableOf(METASTREAMS, loaded, loaded.metastreams))
  }

  private tableOf<V>(spec: TableSpec<V>, loaded: LoadedSnapshot, cached: CachedPages<V>): SnapshotTable<V> {
    const source: SnapshotSource = {
      handle: loaded.handle,
      seq: loaded.directory.seq,
      cacheLimit: () => this.cacheLimit()
    }
    return new SnapshotTable(
      spec,
      source,
      spec.id === 0 ? loaded.directory.originals : loaded.directory.metastreams,
      cached
    )
  }

  get handle(): FileHandle | undefined {
    return this.snapshot.handle
  }

  get snapshotSeq(): number {
    return this.snapshot.directory.seq
  }

  get snapshotBytes(): number {
    return this.snapshot.directory.fileBytes
  }

  get deltaBytes(): number {
    return this.originals.delta.bytes + this.metastreams.delta.bytes
  }

  get pageCacheBytes(): number {
    return this.snapshot.cache.bytes + this.pendingCacheBytes
  }

  get residentIndexBytes(): number {
    return this.indexBytes
  }

  /** What the page cache may hold now: the budget minus the delta and a compaction's kept pages. */
  cacheLimit(): number {
    return Math.max(0, this.cacheBytes - this.deltaBytes - this.pendingCacheBytes)
  }

  /**
   * The snapshot codes `change` needs for the delta's counts: `known` ones (learnt by the transaction's
   * lookups), the others looked up (reading pages that are not cached).
   */
  resolveBases(change: StateChange, known?: Bases): Effect.Effect<Bases, StateError> {
    const codes = <V>(
      table: PagedTable<V>,
      rows: ReadonlyMap<string, V | null>,
      learnt: ReadonlyMap<string, number> | undefined
    ) =>
      Effect.gen(function* () {
        const out = new Map<string, number>()
        if (table.snapshot.pageCount === 0) return out
        for (const name of rows.keys()) {
          if (table.delta.has(name)) continue
          const code = learnt?.get(name)
          if (code !== undefined) {
            out.set(name, code)
            continue
          }
          const peeked = table.snapshot.peek(name)
          out.set(
            name,
            peeked === NotResident
              ? yield* table.snapshotCode(name)
              : peeked === undefined
                ? 0
                : table.spec.codeOf(peeked)
          )
        }
        return out
      })
    return Effect.all({
      originals: codes(this.originals, change.originals, known?.originals),
      metastreams: codes(this.metastreams, change.metastreams, known?.metastreams)
    })
  }

  apply(change: StateChange, bases: Bases): void {
    this.originals.apply(spentMask(change.deleteSpent), change.originals, bases.originals)
    this.metastreams.apply(change.clearMetastreams ? ALL_METASTREAMS_MASK : 0, change.metastreams, bases.metastreams)
    this.applySummary(change)
    this.snapshot.cache.evictTo(this.cacheLimit())
  }

  /** Estimated bytes `change`'s rows would add to the delta. */
  deltaBytesOf(change: StateChange): number {
    let bytes = 0
    for (const name of change.originals.keys())
      bytes += nameBytes(name) + MAP_ENTRY_BYTES + DELTA_ROW_BYTES + ORIGINALS.valueBytes
    for (const name of change.metastreams.keys())
      bytes += nameBytes(name) + MAP_ENTRY_BYTES + DELTA_ROW_BYTES + METASTREAMS.valueBytes
    return bytes
  }

  /**
   * After a compaction that wrote `change` straight into the snapshot it installed: the rest of the change
   * (checkpoint, chunk tables).
   */
  applyWrittenThrough(change: StateChange): void {
    this.applySummary(change)
  }

  private applySummary(change: StateChange): void {
    if (change.checkpoint !== undefined) this.checkpoint = change.checkpoint
    applyTo(this.weights, change.weights)
    applyTo(this.timeRanges, change.timeRanges)
  }

  /** The checkpoint and chunk tables, with `change`'s applied (to copies) when given. */
  summaryWith(change: StateChange | undefined) {
    if (change === undefined) return { checkpoint: this.checkpoint, weights: this.weights, timeRanges: this.timeRanges }
    const weights = new Map(this.weights)
    const timeRanges = new Map(this.timeRanges)
    applyTo(weights, change.weights)
    applyTo(timeRanges, change.timeRanges)
    return { checkpoint: change.checkpoint ?? this.checkpoint, weights, timeRanges }
  }

  /** Up to `limit` Active original streams named after `after`, ascending; committed data. */
  activeStreams(
    after: string | undefined,
    limit: number
  ): Effect.Effect<Array<readonly [string, OriginalStreamData]>, StateError> {
    const cursor = new TableCursor(this.originals, [], after, true)
    const out: Array<readonly [string, OriginalStreamData]> = []
    return Effect.gen(function* () {
      while (out.length < limit) {
        const batch = yield* cursor.nextBatch()
        if (batch === undefined) break
        for (const row of batch) if (row[1].status === "Active" && out.length < limit) out.push(row)
      }
      return out
    })
  }

  /**
   * Visits every stream with a row in either table as the layers above the delta see it, ascending by
   * name, with both of its rows: a merge of two walks, one page of each at a time.
   */
  streamsWithData(
    originalsAbove: ReadonlyArray<RowLayer<OriginalStreamData>>,
    metastreamsAbove: ReadonlyArray<RowLayer<MetastreamData>>,
    visit: (name: string, original: OriginalStreamData | undefined, metastream: MetastreamData | undefined) => void
  ): Effect.Effect<void, StateError> {
    const a = new TableCursor(this.originals, originalsAbove, undefined, false)
    const b = new TableCursor(this.metastreams, metastreamsAbove, undefined, false)
    return Effect.gen(function* () {
      let rowsA: ReadonlyArray<readonly [string, OriginalStreamData]> = []
      let rowsB: ReadonlyArray<readonly [string, MetastreamData]> = []
      let i = 0
      let j = 0
      let doneA = false
      let doneB = false
      while (true) {
        if (i >= rowsA.length && !doneA) {
          const next = yield* a.nextBatch()
          if (next === undefined) doneA = true
          else [rowsA, i] = [next, 0]
          continue
        }
        if (j >= rowsB.length && !doneB) {
          const next = yield* b.nextBatch()
          if (next === undefined) doneB = true
          else [rowsB, j] = [next, 0]
          continue
        }
        const ra = rowsA[i]
        const rb = rowsB[j]
        if (ra === undefined && rb === undefined) return
        if (rb === undefined || (ra !== undefined && ra[0] < rb[0])) {
          visit(ra![0], ra![1], undefined)
          i++
        } else if (ra === undefined || rb[0] < ra[0]) {
          visit(rb[0], undefined, rb[1])
          j++
        } else {
          visit(ra[0], ra[1], rb[1])
          i++
          j++
        }
      }
    })
  }

  allChunkWeights(): Array<ChunkWeight> {
    return [...this.weights].sort((a, b) => a[0] - b[0]).map(([logicalChunk, weight]) => ({ logicalChunk, weight }))
  }

  /**
   * Room for one more page a compaction keeps for the next snapshot: the current cache gives up its least
   * recently used pages; returns how many bytes the next snapshot's cache may hold.
   */
  roomForPendingPage(pageBytes: number): number {
    const budget = Math.max(0, this.cacheBytes - this.deltaBytes)
    this.snapshot.cache.evictTo(budget - this.pendingCacheBytes - pageBytes)
    return budget - this.snapshot.cache.bytes
  }

  /** Accounting for the pages a compaction keeps for the next snapshot. */
  setPendingCacheBytes(bytes: number): void {
    this.pendingCacheBytes = bytes
  }

  /** Installs the snapshot a compaction wrote (it holds the delta); returns the previous file's handle. */
  install(loaded: LoadedSnapshot): FileHandle | undefined {
    const previous = this.snapshot.handle
    this.snapshot.cache.clear()
    this.snapshot = loaded
    this.pendingCacheBytes = 0
    this.indexBytes = directoryBytes(loaded.directory)
    this.originals.swap(this.tableOf(ORIGINALS, loaded, loaded.originals))
    this.metastreams.swap(this.tableOf(METASTREAMS, loaded, loaded.metastreams))
    return previous
  }

  counts() {
    const originals = this.originals.counts()
    return {
      originalStreams: originals.reduce((a, b) => a + b, 0),
      activeStreams: originals[ACTIVE_CODE]!,
      metastreams: this.metastreams.counts()[1]!,
      chunkWeights: this.weights.size,
      chunkTimeRanges: this.timeRanges.size,
      residentBytes: this.pageCacheBytes + this.deltaBytes,
      pageCacheBytes: this.pageCacheBytes,
      deltaBytes: this.deltaBytes,
      indexBytes: this.indexBytes
    }
  }
}

const applyTo = <K, V>(table: Map<K, V>, changes: ReadonlyMap<K, V | null>): void => {
  for (const [key, value] of changes) {
    if (value === null) table.delete(key)
    else table.set(key, value)
  }
}

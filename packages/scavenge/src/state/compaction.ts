/**
 * Compaction: the delta merged into a new snapshot page file, streaming the old pages in name order, so
 * memory stays a page or two plus the new directory and Bloom filters whatever the state's size. Written
 * as every state file: temp file, sync, rename, directory sync. The caller installs the result and only
 * then empties the journal.
 *
 * Two ways to write a table:
 * - incremental (the usual case): a page whose name range holds no delta row is copied as it is (checked
 *   and re-framed, not decoded); the others are decoded, merged with their delta rows and re-paged. The
 *   Bloom filter is the old one plus the delta's names (deleted names only cost false positives), and the
 *   row counts are the delta's exact counts. So a compaction costs a copy of the file plus the work on the
 *   pages the delta touches, not a decode and encode of every row.
 * - full: every row through a merged walk (TableCursor.ts), repacked into full pages with a fresh Bloom
 *   filter sized for half as many rows again. Used when the delta hides snapshot rows wholesale (cleaning),
 *   when the Bloom filter is past its capacity (so a growing state is written whole O(log n) times), and
 *   when incremental merges (which can leave part-filled pages) have made pages per row half as many again
 *   as the last full write had.
 *
 * A commit whose rows would take the delta past its share is not applied to the delta at all: its rows
 * (already in memory as the transaction's overlay) are a layer above the delta for this compaction, so
 * the resident rows never exceed the budget however large one transaction is.
 *
 * Pages written (or copied while cached) are kept, decoded, for the new snapshot's cache while the budget
 * allows (the old cache gives up room for them): a state that fits in the cache stays resident.
 */
import { Disk, type DiskError } from "@vellum/platform"
import { Effect } from "effect"
import { BloomFilter } from "./bloom.js"
import type { Bases, CommittedState, LoadedSnapshot } from "./CommittedState.js"
import { CachedPages, PageCache, type DecodedPage } from "./PageCache.js"
import type { PagedTable } from "./PagedTable.js"
import { PageFileWriter, TableWriter, type TableDirectory } from "./pageFile.js"
import type { StateFiles } from "./stateFiles.js"
import { TableCursor } from "./TableCursor.js"
import { ALL_METASTREAMS_MASK, BELOW, decideAbove, mergeNames, spentMask, type RowLayer } from "./tables.js"
import type { MetastreamData, OriginalStreamData, StateChange, StateCorrupt } from "./types.js"

type StateError = DiskError | StateCorrupt

interface TableOutput<V> {
  readonly writer: PageFileWriter
  readonly hold: (index: number, page: DecodedPage<V>) => void
}

/** A committed change not applied to the delta (it would not fit the budget): written straight through. */
export interface PendingChange {
  readonly change: StateChange
  readonly bases: Bases
}

/** What one table of the new snapshot holds: the table's committed rows under the pending change's. */
interface TableSource<V> {
  readonly table: PagedTable<V>
  /** Layers above the delta (the pending change's rows), top first. */
  readonly above: ReadonlyArray<RowLayer<V>>
  /** Row counts per code afterwards (exact when no layer hides rows wholesale). */
  readonly counts: ReadonlyArray<number>
}

const writeFull = <V>(out: TableOutput<V>, { table, above }: TableSource<V>, rows: number) =>
  Effect.gen(function* () {
    const pages = new TableWriter(out.writer, table.spec, BloomFilter.forNames(Math.ceil(rows * 1.5) + 64), out.hold)
    const cursor = new TableCursor(table, above, undefined, false)
    while (true) {
      const batch = yield* cursor.nextBatch()
      if (batch === undefined) break
      for (const [name, value] of batch) pages.add(name, value)
      yield* out.writer.flush()
    }
    const directory = pages.end()
    table.compactions = { pagesAtFull: directory.pages.length, rowsAtFull: rows }
    return directory
  })

const writeIncremental = <V>(out: TableOutput<V>, { table, above, counts }: TableSource<V>) =>
  Effect.gen(function* () {
    const snapshot = table.snapshot
    const layers = [...above, table.delta]
    const names = mergeNames(layers.map((l) => l.sortedNames()))
    // The old filter has every name of the copied pages; rows added (re-paged ones) add theirs.
    const pages = new TableWriter(out.writer, table.spec, snapshot.directory.bloom.copy(), out.hold)
    const addResolved = (name: string, snapshotValue: V | undefined) => {
      const decided = decideAbove(table.spec, layers, name)
      const value = decided === BELOW ? snapshotValue : decided
      if (value !== undefined) pages.add(name, value)
    }
    let u = 0
    for (let i = 0; i < snapshot.pageCount; i++) {
      const limit = i + 1 < snapshot.pageCount ? snapshot.firstKey(i + 1) : undefined
      let end = u
      while (end < names.length && (limit === undefined || names[end]! < limit)) end++
      if (end === u) {
        pages.copyPage(snapshot.firstKey(i), yield* snapshot.payload(i), snapshot.cachedPage(i))
      } else {
        const rows = yield* snapshot.page(i, false)
        let r = 0
        for (; u < end; u++) {
          const name = names[u]!
          while (r < rows.names.length && rows.names[r]! < name) pages.add(rows.names[r]!, rows.values[r++]!)
          addResolved(name, rows.names[r] === name ? rows.values[r++] : undefined)
        }
        while (r < rows.names.length) pages.add(rows.names[r]!, rows.values[r++]!)
      }
      yield* out.writer.flush()
    }
    return pages.end(counts)
  })

const writeTable = <V>(out: TableOutput<V>, source: TableSource<V>): Effect.Effect<TableDirectory, StateError> => {
  const { table, above, counts } = source
  const rows = counts.reduce((a, b) => a + b, 0)
  const { pagesAtFull, rowsAtFull } = table.compactions
  const pageCount = table.snapshot.pageCount
  // Pages per row now against the last full write's (unknown after a reopen: then no full write is due).
  const fragmented = pagesAtFull > 0 && rows > 0 && pageCount * rowsAtFull > 1.5 * pagesAtFull * rows + 4 * rowsAtFull
  const hides = table.delta.hideMask !== 0 || above.some((l) => l.hideMask !== 0)
  const incremental = pageCount > 0 && !hides && rows <= table.snapshot.directory.bloom.capacity && !fragmented
  return incremental ? writeIncremental(out, source) : writeFull(out, source, rows)
}

/** The pending change's rows of one table as a layer, and the table's counts once it is applied. */
const sourceOf = <V>(
  table: PagedTable<V>,
  pending: PendingChange | undefined,
  rows: (c: StateChange) => ReadonlyMap<string, V | null>,
  mask: (c: StateChange) => number,
  bases: (b: Bases) => ReadonlyMap<string, number>
): TableSource<V> => {
  if (pending === undefined) return { table, above: [], counts: table.counts() }
  const changed = rows(pending.change)
  const hideMask = mask(pending.change)
  let sorted: Array<string> | undefined
  const layer: RowLayer<V> = {
    row: (name) => changed.get(name),
    hideMask,
    sortedNames: () => (sorted ??= [...changed.keys()].sort())
  }
  return { table, above: [layer], counts: table.countsAfter(changed, bases(pending.bases)) }
}

/** Writes the committed state as the snapshot of transaction `seq`; returns it opened for reading. */
export const compactInto = (
  files: StateFiles,
  committed: CommittedState,
  seq: number,
  pageSize: number,
  pending?: PendingChange
): Effect.Effect<LoadedSnapshot, StateError, Disk> =>
  Effect.gen(function* () {
    const disk = yield* Disk
    if (yield* disk.exists(files.snapshotTemp)) yield* disk.remove(files.snapshotTemp)
    const temp = yield* disk.open(files.snapshotTemp, { create: true })
    const cache = new PageCache()
    const originals = new CachedPages<OriginalStreamData>(cache, committed.originals.spec.id)
    const metastreams = new CachedPages<MetastreamData>(cache, committed.metastreams.spec.id)
    const output = <V>(writer: PageFileWriter, cached: CachedPages<V>): TableOutput<V> => ({
      writer,
      hold: (index, page) => {
        cached.put(index, page, committed.roomForPendingPage(page.bytes))
        committed.setPendingCacheBytes(cache.bytes)
      }
    })
    const written = yield* Effect.ensuring(
      Effect.gen(function* () {
        const writer = new PageFileWriter(temp, seq, pageSize)
        const originalPages = yield* writeTable(
          output(writer, originals),
          sourceOf(
            committed.originals,
            pending,
            (c) => c.originals,
            (c) => spentMask(c.deleteSpent),
            (b) => b.originals
          )
        )
        const metastreamPages = yield* writeTable(
          output(writer, metastreams),
          sourceOf(
            committed.metastreams,
            pending,
            (c) => c.metastreams,
            (c) => (c.clearMetastreams ? ALL_METASTREAMS_MASK : 0),
            (b) => b.metastreams
          )
        )
        const summary = committed.summaryWith(pending?.change)
        const fileBytes = yield* writer.finish(summary, originalPages, metastreamPages)
        yield* temp.sync
        return { ...summary, seq, originals: originalPages, metastreams: metastreamPages, fileBytes }
      }),
      Effect.ignore(temp.close)
    )
    yield* disk.rename(files.snapshotTemp, files.snapshot)
    yield* disk.syncDir(files.dir)
    const handle = yield* disk.open(files.snapshot, { readOnly: true })
    return { handle, directory: written, cache, originals, metastreams }
  }).pipe(Effect.onError(() => Effect.sync(() => committed.setPendingCacheBytes(0))))

/**
 * TableIndex: the stream index of one node, (stream, eventNumber) → log position, as an LSM of memtables
 * and immutable sorted tables in levels (EventStoreDB's TableIndex, with our own file formats).
 *
 * - `addBatch` (synchronous, plain) adds a durable batch's entries to the active memtable. When the
 *   memtable reaches `memtableMaxEntries` it is frozen and a background fiber (forked in the index's
 *   Scope) writes it as a level-0 table, syncs it, syncs the directory and saves the manifest. Then, with
 *   `autoMerge`, every level holding ≥ `tablesPerLevel` tables is merged into one table at the next level
 *   (a binary counter with the default 2); the manifest is saved, and only then are the old files
 *   closed and removed. One flush or merge at a time; reads keep working meanwhile. Every change of
 *   the table set is a commit of TableSet.ts.
 * - `scavenge` rewrites the tables through a filter (Scavenge.ts) in the caller's
 *   fiber, one commit per table; merges are held back meanwhile, flushes are not.
 * - Reads take a consistent snapshot (memtables + tables) synchronously, answer from memory and the
 *   block cache where they can, then read the missing blocks (retrying on a fresh snapshot if a merge
 *   closed a table under them). Memtable hits are exact (same stream name); table hits are by hash
 *   and may belong to a colliding stream: the caller checks the record. No dedupe here.
 * - Durability: `persistedPosition` is the manifest's coveredPosition, so after a crash the caller
 *   replays the log from there. The manifest only ever lists complete, synced tables with durable
 *   directory entries; files it does not list are removed on open.
 * - A disk error in background work (a full disk above all) stalls it: the flush or merge is retried after
 *   a backoff on Effect's Clock (50 ms doubling, at most 5 s) until it succeeds; meanwhile `flush`,
 *   `mergeAll`, `awaitIdle` and `awaitCapacity` fail with the error at once (the writer goes on: the log
 *   is the truth), and reads keep serving memtables and tables. A half-built table is removed, so
 *   retries do not fill the disk (one whose manifest commit failed stays, unlisted, until the next open
 *   removes it). IndexCorrupt stops the work for good (retrying cannot mend a damaged table).
 */
import { Cause, Clock, Deferred, Duration, Effect, Exit, FiberId, Queue, type Scope } from "effect"
import { assert, assertionFailureIn, type Disk } from "@vellum/platform"
import { BlockCache } from "./BlockCache.js"
import { compareAscending, compareLatest, type IndexEntry, type NewIndexEntry } from "./Entry.js"
import { mergeSource } from "./Merge.js"
import { MemTable } from "./MemTable.js"
import { type KeepEntry, TableFilter, type TableScavenged } from "./Scavenge.js"
import { type HashFn, type StreamHash, streamHash64 } from "./StreamHash.js"
import type { Table } from "./Table.js"
import { type IndexError, inIndexMapOrder, levelCounts, type LiveTable, TableSet } from "./TableSet.js"

export { type IndexError, wipe } from "./TableSet.js"

export interface TableIndexConfig {
  readonly dir: string
  /** Entries per memtable before it is frozen and flushed (default 1,000,000; tiny in tests). */
  readonly memtableMaxEntries?: number
  /** Tables per level that trigger a merge into the next level (default 2, ≥ 2). */
  readonly tablesPerLevel?: number
  /**
   * Entries per block: the unit of table reads, of the block CRCs and of the fence index (default 128 =
   * 3 KiB: cheaper reads than 6 KiB blocks on Node, for 20 B of fence memory per block).
   */
  readonly entriesPerBlock?: number
  /**
   * Stream hash (default streamHash64); tests pass a weak one to force collisions. Tables store hashes,
   * so it must be the same function every time the directory is opened.
   */
  readonly hash?: HashFn
  /** Check every table's entries CRC on open (reads all tables; default false). */
  readonly verifyOnOpen?: boolean
  /** Block cache shared by the tables (default 4 MiB). */
  readonly blockCacheBytes?: number
  /** Merge levels automatically after flushes (default true). */
  readonly autoMerge?: boolean
  /** Automatic merges produce tables up to this level; higher ones only via `mergeAll` (default: none). */
  readonly maxAutoMergeLevel?: number
  /** Size of the chunks streamed by flushes and merges (default 1 MiB). */
  readonly ioChunkBytes?: number
  /** Frozen memtables that may wait for their flush before `awaitCapacity` holds the writer (default 1). */
  readonly maxFrozenMemtables?: number
}

export interface TableIndexStats {
  readonly tables: number
  /** Number of tables at each level (index = level). */
  readonly levels: ReadonlyArray<number>
  readonly memtableEntries: number
  /** The active memtable plus the frozen ones waiting to be flushed. */
  readonly memtables: number
  readonly tableEntries: number
  /** Estimate of memory held: memtables + fences + blooms + block cache. */
  readonly residentBytes: number
}

export interface TableIndex {
  /** Adds a durable batch; `coveredUpTo` is the log position just after it. Synchronous. */
  readonly addBatch: (entries: ReadonlyArray<NewIndexEntry>, coveredUpTo: number) => void
  /** Entries of hash(stream) with from ≤ eventNumber ≤ to, ascending by (eventNumber, position). */
  readonly range: (stream: string, from: number, to: number) => Effect.Effect<ReadonlyArray<IndexEntry>, IndexError>
  /** Up to `limit` entries with the highest event numbers, descending (ties: lowest position first). */
  readonly latest: (stream: string, limit: number) => Effect.Effect<ReadonlyArray<IndexEntry>, IndexError>
  /**
   * `range` and `latest` looked up when called (not when run): an `Exit` when the memtables, bloom filters and
   * block cache answered, else the Effect that reads. For plain-code readers (platform runNow.ts).
   */
  readonly rangeNow: (stream: string, from: number, to: number) => Effect.Effect<ReadonlyArray<IndexEntry>, IndexError>
  readonly latestNow: (stream: string, limit: number) => Effect.Effect<ReadonlyArray<IndexEntry>, IndexError>
  /** Every log record below this position is in the memtables or tables (live value). */
  readonly coveredPosition: number
  /** Every log record below this position is in durable tables (live value): replay the log from here. */
  readonly persistedPosition: number
  /** Writes the memtable(s) to tables and waits for background work to finish. */
  readonly flush: Effect.Effect<void, IndexError>
  /** Merges every table into one (the /admin/mergeindexes operation) and waits. */
  readonly mergeAll: Effect.Effect<void, IndexError>
  /** Waits until no flush or merge is pending or running. */
  readonly awaitIdle: Effect.Effect<void, IndexError>
  /**
   * Backpressure for the writer: waits while more than `maxFrozenMemtables` full memtables wait to be
   * flushed (only happens when adds outrun the flushes, e.g. replaying the log), which bounds memory.
   */
  readonly awaitCapacity: Effect.Effect<void, IndexError>
  readonly stats: () => TableIndexStats
  /**
   * Index scavenging: rewrites every on-disk table in index-map order (by level,
   * then by age), keeping the entries `keep` says true to; memtables are not scavenged. Waits for a
   * running merge and for the memtables already waiting for their flush, then holds merges back until
   * it ends (flushes, appends and reads go on; a table a flush writes meanwhile is not scavenged this
   * time). A table with nothing to drop is left as it is; one with nothing left is removed. Each new
   * table is switched in through the manifest (a crash leaves the old table or the new one), then
   * `onTable` reports it. An interruption or failure leaves every table old or new, consistently.
   * One scavenge at a time (a second call waits). Not waited for by `awaitIdle`.
   */
  readonly scavenge: <E>(
    keep: KeepEntry<E>,
    onTable: (t: TableScavenged) => Effect.Effect<void, E>
  ) => Effect.Effect<void, IndexError | E>
  /** The on-disk tables in index-map order (as `scavenge` visits them), with their entry counts. */
  readonly tables: () => ReadonlyArray<{ readonly level: number; readonly index: number; readonly entries: number }>
  /** The stream hash the index keys entries by (so the scavenger can map its streams to entry hashes). */
  readonly hashOf: (stream: string) => StreamHash
}

/** A failure of background work that a retry may get past (the disk, not the data). */
const isDiskError = (cause: Cause.Cause<IndexError>): boolean => {
  const error = Cause.failureOption(cause)
  return error._tag === "Some" && error.value._tag === "DiskError"
}

/** Opens (or creates) the index in `config.dir`; background work lives in the current Scope. */
export const open = (config: TableIndexConfig): Effect.Effect<TableIndex, IndexError, Disk | Scope.Scope> =>
  Effect.gen(function* () {
    const dir = config.dir
    const hash = config.hash ?? streamHash64
    const maxEntries = Math.max(1, config.memtableMaxEntries ?? 1_000_000)
    const tablesPerLevel = Math.max(2, config.tablesPerLevel ?? 2)
    const entriesPerBlock = Math.max(1, config.entriesPerBlock ?? 128)
    const chunkBytes = Math.max(24, config.ioChunkBytes ?? 1 << 20)
    const maxFrozen = Math.max(0, config.maxFrozenMemtables ?? 1)
    const autoMerge = config.autoMerge ?? true
    const maxAutoMergeLevel = config.maxAutoMergeLevel ?? Number.POSITIVE_INFINITY
    const cache = new BlockCache(config.blockCacheBytes ?? 4 << 20)

    const set = yield* TableSet.open({
      dir,
      entriesPerBlock,
      chunkBytes,
      cache,
      verifyOnOpen: config.verifyOnOpen === true
    })

    let active = new MemTable(hash)
    const frozen: Array<MemTable> = []
    let covered = set.manifest.coveredPosition
    active.coveredUpTo = covered
    let busy = false
    /** The worker has been woken but has not picked the work up yet. */
    let signalled = false
    let mergeAllRequested = false
    let failure: Cause.Cause<IndexError> | undefined
    /** The last disk error of background work, while it is retried (see the module comment). */
    let stalled: Cause.Cause<IndexError> | undefined
    let waiters: Array<Deferred.Deferred<void>> = []
    const wake = yield* Queue.sliding<void>(1)

    // ---- background work ----

    const levelToMerge = (): number | undefined => {
      const counts = levelCounts(set.tables)
      for (let level = 0; level < counts.length; level++) {
        if (counts[level]! >= tablesPerLevel && level < maxAutoMergeLevel) return level
      }
      return undefined
    }

    /** A merge is running (it retires tables, so a scavenge waits for it). */
    let merging = false
    /** A scavenge is running: merges wait (they would retire the tables it rewrites). */
    let scavenging = false

    const flushOne = Effect.gen(function* () {
      const mem = frozen[0]!
      // The manifest will say the tables cover the log up to mem.coveredUpTo, and the log below it is never
      // indexed again: the table must hold every entry of the memtable, and flushes go forward in log order.
      assert(mem.coveredUpTo >= set.manifest.coveredPosition, "TableIndex: memtables are flushed in log order")
      let written = 0
      const done = () => {
        assert(written === mem.entryCount, "TableIndex: a memtable flush writes every entry it covers")
        frozen.shift()
      }
      if (mem.entryCount === 0) yield* set.commit([], undefined, mem.coveredUpTo, done)
      else {
        const source = mem.source()
        const counted: typeof source = { pull: (out) => Effect.map(source.pull(out), (n) => ((written += n), n)) }
        yield* set.buildAndCommit(0, counted, [], mem.coveredUpTo, done)
      }
      notify()
    })

    /**
     * Merges the tables `pick` chooses into one at the level it says, unless a scavenge runs; deciding and
     * marking the merge is one synchronous step, so a scavenge starting meanwhile sees it. True if it merged.
     */
    const mergeIf = (pick: () => { readonly inputs: ReadonlyArray<LiveTable>; readonly level: number } | undefined) =>
      Effect.suspend((): Effect.Effect<boolean, IndexError> => {
        const chosen = scavenging ? undefined : pick()
        if (chosen === undefined) return Effect.succeed(false)
        merging = true
        const inputs = chosen.inputs.map((t) => t.table)
        return set.buildAndCommit(chosen.level, mergeSource(inputs, chunkBytes), inputs, 0).pipe(
          Effect.ensuring(
            Effect.sync(() => {
              merging = false
              notify()
            })
          ),
          Effect.as(true)
        )
      })

    /** The merges the level counts call for, lowest level first. */
    const autoMerges: Effect.Effect<void, IndexError> = Effect.flatMap(
      mergeIf(() => {
        const level = autoMerge ? levelToMerge() : undefined
        return level === undefined
          ? undefined
          : { inputs: set.tables.filter((t) => t.level === level), level: level + 1 }
      }),
      (merged) => (merged ? autoMerges : Effect.void)
    )

    // Each flush is followed by the merges it triggers (as the reference server does), so the number of
    // tables stays logarithmic even while the writer keeps a memtable queued; memtables that pile up
    // meanwhile are bounded by `awaitCapacity`.
    const work = Effect.gen(function* () {
      for (;;) {
        if (frozen.length > 0) {
          yield* flushOne
          yield* autoMerges
          continue
        }
        yield* autoMerges
        if (mergeAllRequested && !scavenging) {
          mergeAllRequested = false
          yield* mergeIf(() => {
            const all = set.tables
            return all.length > 1 ? { inputs: all, level: Math.max(...all.map((t) => t.level)) } : undefined
          })
          continue
        }
        return
      }
    })

    const notify = () => {
      const ws = waiters
      waiters = []
      for (const d of ws) Deferred.unsafeDone(d, Exit.void)
    }

    const worker = Effect.gen(function* () {
      let retries = 0
      while (failure === undefined) {
        yield* Queue.take(wake)
        signalled = false
        busy = true
        const exit = yield* Effect.exit(work)
        busy = false
        if (Exit.isSuccess(exit)) {
          if (stalled !== undefined) yield* Effect.logInfo(`index: background work resumed after ${retries} retries`)
          stalled = undefined
          retries = 0
        } else if (isDiskError(exit.cause)) {
          if (stalled === undefined)
            yield* Effect.logWarning(
              `index: writing a table failed, retrying: ${(Cause.squash(exit.cause) as Error).message}`
            )
          stalled = exit.cause
          notify()
          yield* Effect.sleep(Duration.millis(Math.min(5000, 50 * 2 ** Math.min(retries++, 7))))
          signal()
          continue
        } else failure = exit.cause
        notify()
        // A broken invariant is not a failure of the index to report and carry on from: it stops the node.
        const broken = failure === undefined ? undefined : assertionFailureIn(failure)
        if (broken !== undefined) return yield* Effect.die(broken)
      }
    })
    // When the index's scope closes, waiters are released (interrupted) rather than left hanging.
    yield* Effect.forkScoped(
      Effect.onInterrupt(worker, (ids) =>
        Effect.sync(() => {
          failure ??= Cause.interrupt(FiberId.combineAll(ids))
          notify()
        })
      )
    )

    const isIdle = () => failure !== undefined || (!busy && !signalled && frozen.length === 0 && !mergeAllRequested)

    const signal = () => {
      signalled = true
      wake.unsafeOffer(undefined)
    }
    // Tables left unmerged by an earlier run (a crash, or a smaller tablesPerLevel now) are merged.
    if (autoMerge && levelToMerge() !== undefined) signal()

    /** Waits until `ready()` holds; the worker wakes waiters after every flush or merge, and when idle. */
    const waitUntil = (ready: () => boolean): Effect.Effect<void, IndexError> => {
      const loop: Effect.Effect<void, IndexError> = Effect.suspend(() => {
        const blocked = failure ?? stalled
        if (blocked !== undefined) return Effect.failCause(blocked)
        if (ready()) return Effect.void
        return Effect.flatMap(Deferred.make<void>(), (d) =>
          Effect.suspend(() => {
            if (failure !== undefined || stalled !== undefined || ready()) return loop
            waiters.push(d)
            return Effect.zipRight(Deferred.await(d), loop)
          })
        )
      })
      return loop
    }

    const awaitIdle = waitUntil(isIdle)
    const awaitCapacity = waitUntil(() => frozen.length <= maxFrozen)

    const rotate = () => {
      active.freeze()
      frozen.push(active)
      active = new MemTable(hash)
      active.coveredUpTo = covered
      signal()
    }

    // ---- reads ----

    /**
     * A read over a consistent snapshot, taken in one synchronous step (so a flush or merge swapping
     * memtables and tables cannot come between its parts): `memtables` runs on every memtable and
     * `lookup` on every table; most tables answer synchronously from the bloom filter and the block
     * cache, the others return an Effect that reads. A merge may retire (close) a table while such a
     * read runs: that read fails with Closed, and the whole lookup is retried on a fresh snapshot,
     * where the merged table holds the same entries. No pins, no locks.
     */
    const snapshotRead = <A>(
      start: () => {
        readonly memtables: (m: MemTable) => void
        readonly lookup: (t: Table) => Effect.Effect<void, IndexError> | undefined
        readonly finish: () => A
      }
    ): Effect.Effect<A, IndexError> => Effect.suspend(() => snapshotNow(start))

    /** `snapshotRead` begun now: an `Exit` when every part answered in memory (runNow.ts), else the reads. */
    const snapshotNow = <A>(start: Parameters<typeof snapshotRead<A>>[0]): Effect.Effect<A, IndexError> => {
      const { memtables, lookup, finish } = start()
      memtables(active)
      for (const m of frozen) memtables(m)
      let reads: Array<Effect.Effect<void, IndexError>> | undefined
      let readFrom: Array<Table> | undefined
      for (const t of set.tables) {
        const read = lookup(t.table)
        if (read === undefined) continue
        ;(reads ??= []).push(read)
        ;(readFrom ??= []).push(t.table)
      }
      if (reads === undefined) return Effect.succeed(finish())
      return Effect.all(reads, { discard: true }).pipe(
        Effect.map(finish),
        Effect.catchIf(
          (e) => e._tag === "DiskError" && e.reason === "Closed" && readFrom!.some((t) => t.retired),
          () => snapshotRead(start)
        )
      )
    }

    const range = (stream: string, from: number, to: number): Effect.Effect<ReadonlyArray<IndexEntry>, IndexError> =>
      Effect.suspend(() => rangeNow(stream, from, to))
    const rangeNow = (stream: string, from: number, to: number): Effect.Effect<ReadonlyArray<IndexEntry>, IndexError> =>
      snapshotNow(() => {
        const out: Array<IndexEntry> = []
        const h = hash(stream)
        return {
          memtables: (m) => m.rangeInto(stream, from, to, out),
          lookup: (t) => t.range(h.hi, h.lo, from, to, out),
          finish: () => out.sort(compareAscending)
        }
      })

    const latest = (stream: string, limit: number): Effect.Effect<ReadonlyArray<IndexEntry>, IndexError> =>
      Effect.suspend(() => latestNow(stream, limit))
    const latestNow = (stream: string, limit: number): Effect.Effect<ReadonlyArray<IndexEntry>, IndexError> =>
      snapshotNow(() => {
        const out: Array<IndexEntry> = []
        const h = hash(stream)
        return {
          memtables: (m) => m.latestInto(stream, limit, out),
          lookup: (t) => t.latest(h.hi, h.lo, limit, out),
          finish: () => {
            out.sort(compareLatest)
            if (out.length > limit) out.length = limit
            return out
          }
        }
      })

    const addBatch = (entries: ReadonlyArray<NewIndexEntry>, coveredUpTo: number): void => {
      for (const e of entries) {
        if (
          !Number.isSafeInteger(e.eventNumber) ||
          e.eventNumber < 0 ||
          !Number.isSafeInteger(e.position) ||
          e.position < 0
        ) {
          throw new RangeError(`TableIndex.addBatch: bad entry ${e.stream}@${e.eventNumber} at ${e.position}`)
        }
      }
      const mem = active
      for (const e of entries) {
        // The memtable claims to cover the log up to `coveredUpTo`; an entry at or past it is not covered.
        assert(e.position < coveredUpTo, "TableIndex: a batch's entries lie below the position it covers")
        mem.add(e.stream, e.eventNumber, e.position)
      }
      if (coveredUpTo > covered) covered = coveredUpTo
      mem.coveredUpTo = covered
      if (mem.entryCount >= maxEntries) rotate()
    }

    const flush: Effect.Effect<void, IndexError> = Effect.suspend(() => {
      const queuedUpTo = frozen.length > 0 ? frozen[frozen.length - 1]!.coveredUpTo : set.manifest.coveredPosition
      if (active.entryCount > 0 || covered > queuedUpTo) rotate()
      return awaitIdle
    })

    const mergeAll: Effect.Effect<void, IndexError> = Effect.suspend(() => {
      mergeAllRequested = true
      signal()
      return awaitIdle
    })

    const stats = (): TableIndexStats => {
      let memtableEntries = active.entryCount
      let residentBytes = active.byteSize() + cache.residentBytes()
      for (const m of frozen) {
        memtableEntries += m.entryCount
        residentBytes += m.byteSize()
      }
      let tableEntries = 0
      for (const t of set.tables) {
        tableEntries += t.table.entryCount
        residentBytes += t.table.residentBytes()
      }
      return {
        tables: set.tables.length,
        levels: levelCounts(set.tables),
        memtableEntries,
        memtables: 1 + frozen.length,
        tableEntries,
        residentBytes
      }
    }

    // ---- scavenge ----

    const scavengeLock = yield* Effect.makeSemaphore(1)

    /** Rewrites one table without the entries `keep` drops (left as it is when there are none). */
    const scavengeTable = <E>(live: LiveTable, keep: KeepEntry<E>) =>
      Effect.gen(function* () {
        const filter = new TableFilter(live.table, keep, chunkBytes)
        if (!(yield* filter.findFirstDrop())) return { filter, spaceSaved: 0 }
        const newBytes = yield* set.buildAndCommit(live.level, filter.source(), [live.table], 0)
        return { filter, spaceSaved: live.table.fileBytes - newBytes }
      })

    const scavenge = <E>(
      keep: KeepEntry<E>,
      onTable: (t: TableScavenged) => Effect.Effect<void, E>
    ): Effect.Effect<void, IndexError | E> =>
      scavengeLock.withPermits(1)(
        Effect.suspend(() => {
          scavenging = true
          const lastWaiting = frozen[frozen.length - 1]
          const run = Effect.gen(function* () {
            // A running merge would retire tables under the scavenge; memtables already waiting are scavenged too.
            yield* waitUntil(() => !merging && (lastWaiting === undefined || !frozen.includes(lastWaiting)))
            for (const { live, level, index } of inIndexMapOrder(set.tables)) {
              const start = yield* Clock.currentTimeMillis
              const { filter, spaceSaved } = yield* scavengeTable(live, keep)
              const timeTakenMillis = (yield* Clock.currentTimeMillis) - start
              yield* onTable({
                level,
                index,
                entriesKept: filter.entriesKept,
                entriesDeleted: filter.entriesDeleted,
                spaceSaved,
                timeTakenMillis
              })
            }
          })
          // The merges held back meanwhile run now.
          return Effect.ensuring(
            run,
            Effect.sync(() => {
              scavenging = false
              signal()
            })
          )
        })
      )

    const index: TableIndex = {
      addBatch,
      range,
      rangeNow,
      latest,
      latestNow,
      get coveredPosition() {
        return covered
      },
      get persistedPosition() {
        return set.manifest.coveredPosition
      },
      flush,
      mergeAll,
      awaitIdle,
      awaitCapacity,
      stats,
      scavenge,
      tables: () =>
        inIndexMapOrder(set.tables).map(({ live, level, index }) => ({ level, index, entries: live.table.entryCount })),
      hashOf: hash
    }
    return index
  })

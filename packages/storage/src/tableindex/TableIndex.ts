/**
 * TableIndex: the stream index of one node, (stream, eventNumber) → log position, as an LSM of memtables
 * and immutable sorted tables in levels (spec §2: EventStoreDB's TableIndex, with our own file formats).
 *
 * - `addBatch` (synchronous, plain) adds a durable batch's entries to the active memtable. When the
 *   memtable reaches `memtableMaxEntries` it is frozen and a background fiber (forked in the index's
 *   Scope) writes it as a level-0 table, syncs it, syncs the directory and saves the manifest. Then, with
 *   `autoMerge`, every level holding ≥ `tablesPerLevel` tables is merged into one table at the next level
 *   (a binary counter with the default 2); the manifest is saved, and only then are the old files
 *   closed and removed. One flush or merge at a time; reads keep working meanwhile.
 * - Reads take a consistent snapshot (memtables + tables) synchronously, answer from memory and the
 *   block cache where they can, then read the missing blocks (retrying on a fresh snapshot if a merge
 *   closed a table under them). Memtable hits are exact (same stream name); table hits are by hash
 *   and may belong to a colliding stream: the caller checks the record. No dedupe here.
 * - Durability: `persistedPosition` is the manifest's coveredPosition, so after a crash the caller
 *   replays the log from there. The manifest only ever lists complete, synced tables with durable
 *   directory entries; files it does not list are removed on open.
 * - A failure of background work (DiskError, IndexCorrupt) stops it (fail-stop, as the log does):
 *   `flush`, `mergeAll` and `awaitIdle` then fail with it; reads keep serving what exists.
 */
import { Cause, Deferred, Effect, Exit, FiberId, Queue, type Scope } from "effect"
import { Disk, type DiskError, join } from "@vellum/platform"
import { BlockCache } from "./BlockCache.js"
import { compareAscending, compareLatest, type EntrySource, type IndexEntry, IndexCorrupt, type NewIndexEntry } from "./Entry.js"
import { emptyManifest, type Manifest, MANIFEST_FILE, MANIFEST_TMP, readManifest, tableFileName, writeManifest } from "./Manifest.js"
import { mergeSource } from "./Merge.js"
import { MemTable } from "./MemTable.js"
import { type HashFn, streamHash64 } from "./StreamHash.js"
import { openTable, type Table } from "./Table.js"
import { writeTable } from "./TableWriter.js"

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

export type IndexError = DiskError | IndexCorrupt

export interface TableIndex {
  /** Adds a durable batch; `coveredUpTo` is the log position just after it. Synchronous. */
  readonly addBatch: (entries: ReadonlyArray<NewIndexEntry>, coveredUpTo: number) => void
  /** Entries of hash(stream) with from ≤ eventNumber ≤ to, ascending by (eventNumber, position). */
  readonly range: (stream: string, from: number, to: number) => Effect.Effect<ReadonlyArray<IndexEntry>, IndexError>
  /** Up to `limit` entries with the highest event numbers, descending (ties: lowest position first). */
  readonly latest: (stream: string, limit: number) => Effect.Effect<ReadonlyArray<IndexEntry>, IndexError>
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
}

interface LiveTable {
  readonly table: Table
  readonly level: number
}

const isOurFile = (name: string): boolean => name === MANIFEST_TMP || name.endsWith(".vtable")

/** Opens (or creates) the index in `config.dir`; background work lives in the current Scope. */
export const open = (config: TableIndexConfig): Effect.Effect<TableIndex, IndexError, Disk | Scope.Scope> =>
  Effect.gen(function*() {
    const disk = yield* Disk
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

    yield* disk.mkdir(dir)
    let manifest: Manifest = (yield* readManifest(dir)) ?? emptyManifest
    const listed = new Set(manifest.tables.map((t) => t.file))
    for (const name of yield* disk.list(dir)) {
      // Half-written tables and temp manifests; other components' files in the directory are left alone.
      if (isOurFile(name) && !listed.has(name)) yield* disk.remove(join(dir, name))
    }

    let tables: Array<LiveTable> = []
    yield* Effect.addFinalizer(() => Effect.forEach(tables, (t) => Effect.ignore(t.table.close()), { discard: true }))
    for (const t of [...manifest.tables].sort((a, b) => a.id - b.id)) {
      const path = join(dir, t.file)
      const table = yield* Effect.mapError(
        openTable(path, t.id, { verify: config.verifyOnOpen === true, chunkBytes, cache }),
        (e) => e._tag === "DiskError" && e.reason === "NotFound"
          ? new IndexCorrupt({ path, message: `table ${path} listed in the manifest is missing` })
          : e
      )
      tables.push({ table, level: t.level })
    }

    let active = new MemTable(hash)
    const frozen: Array<MemTable> = []
    let covered = manifest.coveredPosition
    active.coveredUpTo = covered
    let nextTableId = manifest.nextTableId
    let busy = false
    /** The worker has been woken but has not picked the work up yet. */
    let signalled = false
    let mergeAllRequested = false
    let failure: Cause.Cause<IndexError> | undefined
    let waiters: Array<Deferred.Deferred<void>> = []
    const wake = yield* Queue.sliding<void>(1)

    // ---- background work ----

    const levelToMerge = (): number | undefined => {
      const counts = levelCounts(tables)
      for (let level = 0; level < counts.length; level++) {
        if (counts[level]! >= tablesPerLevel && level < maxAutoMergeLevel) return level
      }
      return undefined
    }

    /** Saves `next` and applies `swap` to memory as one step that an interruption cannot split. */
    const commit = (next: Manifest, swap: () => void) =>
      Effect.uninterruptible(Effect.map(writeManifest(dir, next), () => {
        manifest = next
        swap()
      }))

    /**
     * Writes `source` as table `id`, syncs it and its directory entry, opens it, then commits the
     * manifest `next` and applies `swap`. Once the table is open, nothing can interrupt before the
     * commit decides who owns it (the index, or nobody: then it is closed).
     */
    const buildAndCommit = <E>(id: number, source: EntrySource<E>, next: Manifest, swap: (table: Table) => void) =>
      Effect.uninterruptibleMask((restore) =>
        Effect.flatMap(
          restore(Effect.gen(function*() {
            const path = join(dir, tableFileName(id))
            yield* writeTable(path, source, { entriesPerBlock, chunkBytes })
            yield* disk.syncDir(dir)
            return yield* openTable(path, id, { cache })
          })),
          (table) => Effect.onError(commit(next, () => swap(table)), () => Effect.ignore(table.close()))
        ))

    const flushOne = Effect.gen(function*() {
      const mem = frozen[0]!
      const coveredPosition = Math.max(manifest.coveredPosition, mem.coveredUpTo)
      if (mem.entryCount === 0) {
        const next = { ...manifest, coveredPosition }
        yield* commit(next, () => void frozen.shift())
        return notify()
      }
      const id = nextTableId++
      const next: Manifest = {
        coveredPosition,
        nextTableId,
        tables: [...manifest.tables, { id, level: 0, file: tableFileName(id) }]
      }
      yield* buildAndCommit(id, mem.source(), next, (table) => {
        tables = [...tables, { table, level: 0 }]
        frozen.shift()
      })
      notify()
    })

    /** Closes and removes a merged-away table; a read still using it fails with Closed and retries. */
    const retire = (table: Table) =>
      Effect.suspend(() => {
        table.retired = true
        cache.dropTable(table.id)
        // A failed removal only leaves an unlisted file, which the next open removes.
        return Effect.zipRight(Effect.ignore(table.close()), Effect.ignore(disk.remove(table.path)))
      })

    const mergeTables = (inputs: ReadonlyArray<LiveTable>, level: number) =>
      Effect.gen(function*() {
        const id = nextTableId++
        const gone = new Set(inputs.map((t) => t.table.id))
        const next: Manifest = {
          coveredPosition: manifest.coveredPosition,
          nextTableId,
          tables: [...manifest.tables.filter((t) => !gone.has(t.id)), { id, level, file: tableFileName(id) }]
        }
        yield* buildAndCommit(id, mergeSource(inputs.map((t) => t.table), chunkBytes), next, (table) => {
          tables = [...tables.filter((t) => !gone.has(t.table.id)), { table, level }]
        })
        for (const t of inputs) yield* retire(t.table)
      })

    /** The merges the level counts call for, lowest level first. */
    const autoMerges = Effect.gen(function*() {
      for (let level = autoMerge ? levelToMerge() : undefined; level !== undefined; level = levelToMerge()) {
        yield* mergeTables(tables.filter((t) => t.level === level), level + 1)
      }
    })

    // Each flush is followed by the merges it triggers (as the reference server does), so the number of
    // tables stays logarithmic even while the writer keeps a memtable queued; memtables that pile up
    // meanwhile are bounded by `awaitCapacity`.
    const work = Effect.gen(function*() {
      for (;;) {
        if (frozen.length > 0) {
          yield* flushOne
          yield* autoMerges
          continue
        }
        yield* autoMerges
        if (mergeAllRequested) {
          mergeAllRequested = false
          if (tables.length > 1) yield* mergeTables(tables, Math.max(...tables.map((t) => t.level)))
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

    const worker = Effect.gen(function*() {
      while (failure === undefined) {
        yield* Queue.take(wake)
        signalled = false
        busy = true
        const exit = yield* Effect.exit(work)
        busy = false
        if (Exit.isFailure(exit)) failure = exit.cause
        notify()
      }
    })
    // When the index's scope closes, waiters are released (interrupted) rather than left hanging.
    yield* Effect.forkScoped(Effect.onInterrupt(worker, (ids) =>
      Effect.sync(() => {
        failure ??= Cause.interrupt(FiberId.combineAll(ids))
        notify()
      })))

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
        if (failure !== undefined) return Effect.failCause(failure)
        if (ready()) return Effect.void
        return Effect.flatMap(Deferred.make<void>(), (d) =>
          Effect.suspend(() => {
            if (failure !== undefined || ready()) return loop
            waiters.push(d)
            return Effect.zipRight(Deferred.await(d), loop)
          }))
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
    ): Effect.Effect<A, IndexError> =>
      Effect.suspend(() => {
        const { memtables, lookup, finish } = start()
        memtables(active)
        for (const m of frozen) memtables(m)
        let reads: Array<Effect.Effect<void, IndexError>> | undefined
        let readFrom: Array<Table> | undefined
        for (const t of tables) {
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
      })

    const range = (stream: string, from: number, to: number): Effect.Effect<ReadonlyArray<IndexEntry>, IndexError> =>
      snapshotRead(() => {
        const out: Array<IndexEntry> = []
        const h = hash(stream)
        return {
          memtables: (m) => m.rangeInto(stream, from, to, out),
          lookup: (t) => t.range(h.hi, h.lo, from, to, out),
          finish: () => out.sort(compareAscending)
        }
      })

    const latest = (stream: string, limit: number): Effect.Effect<ReadonlyArray<IndexEntry>, IndexError> =>
      snapshotRead(() => {
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
        if (!Number.isSafeInteger(e.eventNumber) || e.eventNumber < 0 || !Number.isSafeInteger(e.position) || e.position < 0) {
          throw new RangeError(`TableIndex.addBatch: bad entry ${e.stream}@${e.eventNumber} at ${e.position}`)
        }
      }
      const mem = active
      for (const e of entries) mem.add(e.stream, e.eventNumber, e.position)
      if (coveredUpTo > covered) covered = coveredUpTo
      mem.coveredUpTo = covered
      if (mem.entryCount >= maxEntries) rotate()
    }

    const flush: Effect.Effect<void, IndexError> = Effect.suspend(() => {
      const queuedUpTo = frozen.length > 0 ? frozen[frozen.length - 1]!.coveredUpTo : manifest.coveredPosition
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
      for (const t of tables) {
        tableEntries += t.table.entryCount
        residentBytes += t.table.residentBytes()
      }
      return { tables: tables.length, levels: levelCounts(tables), memtableEntries, memtables: 1 + frozen.length, tableEntries, residentBytes }
    }

    const index: TableIndex = {
      addBatch,
      range,
      latest,
      get coveredPosition() {
        return covered
      },
      get persistedPosition() {
        return manifest.coveredPosition
      },
      flush,
      mergeAll,
      awaitIdle,
      awaitCapacity,
      stats
    }
    return index
  })

/**
 * Removes the index's files from `dir` (tables, manifest, temp manifest): what the caller does before
 * rebuilding the index from the log after an IndexCorrupt. Other files in the directory stay.
 */
export const wipe = (dir: string): Effect.Effect<void, DiskError, Disk> =>
  Effect.gen(function*() {
    const disk = yield* Disk
    if (!(yield* disk.exists(dir))) return
    for (const name of yield* disk.list(dir)) {
      if (isOurFile(name) || name === MANIFEST_FILE) yield* disk.remove(join(dir, name))
    }
    yield* disk.syncDir(dir)
  })

const levelCounts = (tables: ReadonlyArray<LiveTable>): Array<number> => {
  const counts: Array<number> = []
  for (const t of tables) {
    while (counts.length <= t.level) counts.push(0)
    counts[t.level]!++
  }
  return counts
}

/**
 * The persisted scavenge state (spec/scavenge.md §2.1): what accumulation learnt about streams with
 * metadata or tombstones, chunk weights and timestamp ranges, and the checkpoint a stopped or crashed run
 * resumes from (§2.8). It replaces the reference's SQLite database; keys are stream names (§3.8).
 *
 * Design
 * - Memory is the source of truth for reads: every table lives in Maps (StateTables), so reads are plain
 *   synchronous calls. Disk holds a snapshot plus a journal, and only ever serves recovery.
 * - A transaction (StateTransaction) collects its net change in an overlay. `commit(checkpoint)` encodes
 *   that change and the checkpoint as ONE CRC-framed record, writes it at the journal's end in one write
 *   (padded to whole `pageSize` pages, so a synced page is never rewritten), syncs once, and only then
 *   applies it to memory. So a phase's data and its checkpoint are durable together or not at all; a crash
 *   or stop before the sync loses that transaction and nothing else, and a chunk weight cannot be added
 *   twice (the addition and the checkpoint saying "chunk n done" are the same record). Transactions run
 *   one at a time (a semaphore); readers outside see committed data only.
 * - Frames carry a sequence number (previous + 1). On open the snapshot is loaded, the journal's frames
 *   after the snapshot's sequence are replayed, and whatever follows the last valid frame (a torn or
 *   unsynced write) is cut off and the cut synced. A bad frame FOLLOWED by a valid one is damage, not a
 *   crash, and fails the open with StateCorrupt instead of silently dropping committed work.
 * - Compaction: once the journal outgrows max(`compactAfterBytes`, last snapshot size) — so rewriting the
 *   snapshot is amortised over at least as many journal bytes — the whole state is written as a snapshot
 *   (temp file, sync, rename, directory sync) and the journal is then truncated to zero and synced. A
 *   crash in between leaves journal frames the snapshot already holds; their sequence numbers say so.
 * - Fail-stop: after a failed write or sync the file is in an unknown state (Disk contract), so every
 *   later transaction fails with that error; reopening recovers from what is durable.
 *
 * Memory: everything is resident. Each original stream with metadata or a tombstone costs a Map entry,
 * its name and a 7-field object, plus a slot in the sorted Active list while Active; its metastream row a
 * second entry, name and object. Measured in V8: about 350 bytes for a stream with both rows and a
 * 22-character name. So memory grows linearly with the number of streams that have metadata or tombstones
 * (1 M of them ≈ 350 MB), independent of the total number of streams or events; weights and time ranges
 * grow with the number of logical chunks (tiny). `cacheBytes` (ScavengeBackendCacheSize) is NOT honoured:
 * nothing is paged out, so the state cannot be held below its resident size. A compaction briefly holds
 * one encoded copy of the state as well, and recovery one copy of the snapshot and journal bytes.
 */
import { Disk, DiskError, type FileHandle } from "@vellum/platform"
import { Effect } from "effect"
import { encodeChange } from "./codec.js"
import { encodeFrame } from "./frames.js"
import { loadSnapshot, recoverJournal, removeLeftovers, stateFiles, writeSnapshot, type StateFiles } from "./stateFiles.js"
import { StateTables } from "./StateTables.js"
import { Transaction, type StateTransaction } from "./StateTransaction.js"
import type {
  Checkpoint, ChunkTimeRange, ChunkWeight, MetastreamData, OriginalStreamData, ScavengeStateCounts, StateChange, StateCorrupt
} from "./types.js"

export interface ScavengeStateOptions {
  /** ScavengeBackendPageSize: journal frames are padded to whole pages. */
  readonly pageSize: number
  /** ScavengeBackendCacheSize: accepted but not honoured (see the module header). */
  readonly cacheBytes: number
  /** Journal size that triggers compaction when the snapshot is smaller (default 64 pages). */
  readonly compactAfterBytes?: number
}

export interface ScavengeState {
  /** The last committed checkpoint; undefined when no transaction was ever committed. */
  readonly checkpoint: () => Checkpoint | undefined
  readonly originalStream: (name: string) => OriginalStreamData | undefined
  readonly metastream: (name: string) => MetastreamData | undefined
  /** undefined when the chunk has no weight row. */
  readonly chunkWeight: (logicalChunk: number) => number | undefined
  readonly chunkTimeRange: (logicalChunk: number) => ChunkTimeRange | undefined
  /** Up to `limit` Active original streams named strictly after `after` (all when undefined), ascending by name. */
  readonly activeStreams: (after: string | undefined, limit: number) => ReadonlyArray<readonly [string, OriginalStreamData]>
  /** Every weight row, by ascending logical chunk. */
  readonly allChunkWeights: () => ReadonlyArray<ChunkWeight>
  readonly counts: () => ScavengeStateCounts
  /**
   * Runs `body` as the only open transaction (others wait). `body` ends with `tx.commit(checkpoint)`; if
   * it fails, is interrupted or returns without committing, its changes are dropped (rollback).
   */
  readonly transaction: <A, E, R>(body: (tx: StateTransaction) => Effect.Effect<A, E, R>) => Effect.Effect<A, E | DiskError, R>
  /**
   * A transaction outside `transaction`, for a single owner that keeps one open between commits (the
   * session of StateSession.ts). It does not wait for, nor exclude, other transactions: never mix it with
   * concurrent `transaction` calls. `rollback` drops it.
   */
  readonly begin: () => StateTransaction & { readonly rollback: () => void }
  /** Closes the journal; later transactions fail with reason Closed. */
  readonly close: Effect.Effect<void, DiskError>
}

export const openScavengeState = (
  dir: string, options: ScavengeStateOptions
): Effect.Effect<ScavengeState, DiskError | StateCorrupt, Disk> =>
  Effect.gen(function*() {
    const { pageSize } = options
    if (!Number.isSafeInteger(pageSize) || pageSize < 1) return yield* Effect.dieMessage(`invalid scavenge state page size ${pageSize}`)
    const disk = yield* Disk
    const files = stateFiles(dir)
    yield* disk.mkdir(dir)
    yield* removeLeftovers(files)

    const tables = new StateTables()
    const snapshot = yield* loadSnapshot(files)
    if (snapshot !== undefined) tables.apply(snapshot.change)
    const journal = yield* disk.open(files.journal, { create: true })
    // The journal's directory entry must be durable before any commit relies on it.
    yield* disk.syncDir(dir)
    const recovered = yield* Effect.tapError(recoverJournal(journal, snapshot?.seq ?? 0), () => Effect.ignore(journal.close))
    for (const change of recovered.changes) tables.apply(change)

    const writer = new JournalWriter(files, journal, tables, {
      pageSize,
      compactAfterBytes: options.compactAfterBytes ?? 64 * pageSize,
      lastSeq: recovered.lastSeq,
      journalBytes: recovered.end,
      snapshotBytes: snapshot?.bytes ?? 0
    })
    const permit = yield* Effect.makeSemaphore(1)

    const newTransaction = () => new Transaction(tables, (change) => Effect.provideService(writer.commit(change), Disk, disk))
    const transaction = <A, E, R>(body: (tx: StateTransaction) => Effect.Effect<A, E, R>) =>
      permit.withPermits(1)(
        Effect.suspend((): Effect.Effect<A, E | DiskError, R> => {
          const refused = writer.refusal()
          if (refused !== undefined) return Effect.fail(refused)
          const tx = newTransaction()
          return Effect.ensuring(body(tx), Effect.sync(tx.rollback))
        })
      )

    const state: ScavengeState = {
      checkpoint: () => tables.checkpoint,
      originalStream: (name) => tables.originals.get(name),
      metastream: (name) => tables.metastreams.get(name),
      chunkWeight: (n) => tables.weights.get(n),
      chunkTimeRange: (n) => tables.timeRanges.get(n),
      activeStreams: (after, limit) => tables.activeStreams(after, limit),
      allChunkWeights: () => tables.allChunkWeights(),
      counts: () => ({
        originalStreams: tables.originals.size,
        activeStreams: tables.activeStreamCount,
        metastreams: tables.metastreams.size,
        chunkWeights: tables.weights.size,
        chunkTimeRanges: tables.timeRanges.size,
        journalBytes: writer.journalBytes,
        snapshotBytes: writer.snapshotBytes
      }),
      transaction,
      begin: newTransaction,
      close: permit.withPermits(1)(writer.close)
    }
    return state
  })

interface WriterPosition {
  readonly pageSize: number
  readonly compactAfterBytes: number
  lastSeq: number
  journalBytes: number
  snapshotBytes: number
}

/** Appends committed transactions to the journal and compacts it; fail-stop after any disk error. */
class JournalWriter {
  private failed: DiskError | undefined
  private closed = false

  constructor(
    private readonly files: StateFiles,
    private readonly journal: FileHandle,
    private readonly tables: StateTables,
    private readonly at: WriterPosition
  ) {}

  get journalBytes(): number {
    return this.at.journalBytes
  }

  get snapshotBytes(): number {
    return this.at.snapshotBytes
  }

  /** Why no transaction may start, if one may not. */
  refusal(): DiskError | undefined {
    if (this.closed) {
      return new DiskError({ reason: "Closed", op: "transaction", path: this.files.journal, message: "the scavenge state is closed" })
    }
    return this.failed
  }

  commit(change: StateChange): Effect.Effect<void, DiskError, Disk> {
    return Effect.uninterruptible(Effect.suspend(() => {
      const refused = this.refusal()
      if (refused !== undefined) return Effect.fail(refused)
      const seq = this.at.lastSeq + 1
      const frame = encodeFrame(seq, encodeChange(change), this.at.pageSize)
      return this.journal.write(this.at.journalBytes, frame).pipe(
        Effect.zipRight(this.journal.sync),
        Effect.zipRight(Effect.suspend(() => {
          this.at.lastSeq = seq
          this.at.journalBytes += frame.length
          this.tables.apply(change)
          return this.at.journalBytes > Math.max(this.at.compactAfterBytes, this.at.snapshotBytes) ? this.compact : Effect.void
        })),
        Effect.tapError((error) => Effect.sync(() => (this.failed ??= error)))
      )
    }))
  }

  /** Snapshot of everything up to `lastSeq`, then an empty journal. */
  private get compact(): Effect.Effect<void, DiskError, Disk> {
    return Effect.gen(this, function*() {
      this.at.snapshotBytes = yield* writeSnapshot(this.files, this.at.lastSeq, this.tables.asChange(), this.at.pageSize)
      yield* this.journal.truncate(0)
      yield* this.journal.sync
      this.at.journalBytes = 0
    })
  }

  get close(): Effect.Effect<void, DiskError> {
    return Effect.suspend(() => {
      if (this.closed) return Effect.void
      this.closed = true
      return this.journal.close
    })
  }
}

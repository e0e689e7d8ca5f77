/**
 * The persisted scavenge state: what accumulation learnt about streams with
 * metadata or tombstones, chunk weights and timestamp ranges, and the checkpoint a stopped or crashed run
 * resumes from. It replaces the reference's SQLite database; keys are stream names.
 *
 * Design: a sorted page file, a journal, and a bounded memory
 * - The snapshot is a page file (pageFile.ts): the original-stream and metastream rows sorted by name in
 *   CRC-checked pages of `pageSize` bytes, then a directory (first name and place of every page, Bloom
 *   filters, row counts, the chunk tables, the checkpoint, the transaction `seq` it holds).
 * - A transaction (StateTransaction.ts) collects its net change in an overlay. `commit(checkpoint)` encodes
 *   that change and the checkpoint as ONE CRC-framed record, writes it at the journal's end in one write
 *   (padded to whole pages, so a synced page is never rewritten), syncs once, and only then applies it to
 *   memory. So a phase's data and its checkpoint are durable together or not at all; a crash or stop before
 *   the sync loses that transaction and nothing else, and a chunk weight cannot be added twice. Transactions
 *   run one at a time (a semaphore); readers outside see committed data only.
 * - In memory (CommittedState.ts): the page directory and Bloom filters (≤ ~1.9 bytes per row plus a name per
 *   page), the chunk tables and checkpoint (per logical chunk: tiny), the DELTA (rows committed since the
 *   snapshot, i.e. what the journal holds), the open transaction's overlay, and an LRU cache of decoded
 *   pages. Page cache + delta ≤ `cacheBytes` (ScavengeBackendCacheSize), with row sizes estimated as
 *   tables.ts measured them; `counts().residentBytes` reports the sum. A lookup goes overlay → delta →
 *   Bloom filter → cached page → page read; `peek*` stops before the read.
 * - Compaction (compaction.ts) merges the delta into a new page file by streaming the old pages in order
 *   (copying those the delta leaves alone), once the delta passes a quarter of `cacheBytes` — a commit whose
 *   rows would take it past that is written straight through by a compaction instead of entering the
 *   delta — or the journal outgrows max(`compactAfterBytes`,
 *   min(snapshot size, `cacheBytes`)) (so rewriting the snapshot is amortised, and recovery never reads a
 *   journal much larger than the cache). Written as temp file, sync, rename, directory sync; then the
 *   journal is truncated to zero and synced. A crash in between leaves journal frames the snapshot already
 *   holds; their sequence numbers say so. Pages just written stay cached while they fit, and open reads
 *   pages into the cache while they fit, so a state smaller than the cache is wholly resident.
 * - Frames carry a sequence number (previous + 1). On open the directory is loaded, the journal's frames
 *   after the snapshot's sequence are replayed into the delta, and whatever follows the last valid frame (a
 *   torn or unsynced write) is cut off and the cut synced. A bad frame FOLLOWED by a valid one is damage,
 *   not a crash, and fails the open with StateCorrupt; so does a damaged snapshot page when it is read.
 *   Reads that return bad bytes are read again before being believed (rereads.ts).
 * - Fail-stop: after a failed write or sync the file is in an unknown state (Disk contract), so every
 *   later transaction fails with that error; reopening recovers from what is durable.
 *
 * Memory beyond the budget: the directory and Bloom filters (`counts().indexBytes`); the open transaction's
 * overlay (one phase batch, also the rows a write-through compaction takes from it); while compacting, one
 * old page, the page being written and the new directory; recovery holds the journal's bytes and replays
 * them into the delta (compacting at once if that passes the share).
 *
 * Cost: every compaction copies the snapshot file, so a state much larger than `cacheBytes` is rewritten
 * about (rows written × row size) / (cacheBytes / 4) times per run.
 */
import { Disk, DiskError, type FileHandle } from "@vellum/platform"
import { Effect } from "effect"
import { encodeChange } from "./codec.js"
import { CommittedState, type Bases } from "./CommittedState.js"
import { compactInto, type PendingChange } from "./compaction.js"
import { encodeFrame } from "./frames.js"
import { openSnapshot, recoverJournal, removeLeftovers, stateFiles, type StateFiles } from "./stateFiles.js"
import { Transaction, type StateTransaction } from "./StateTransaction.js"
import type {
  Checkpoint,
  ChunkTimeRange,
  ChunkWeight,
  MetastreamData,
  NotResident,
  OriginalStreamData,
  ScavengeStateCounts,
  StateChange,
  StateCorrupt
} from "./types.js"

export interface ScavengeStateOptions {
  /** ScavengeBackendPageSize: snapshot pages and journal frames are whole pages of this size. */
  readonly pageSize: number
  /** ScavengeBackendCacheSize: the bound on page cache + delta (see the module header). */
  readonly cacheBytes: number
  /** Journal size that triggers compaction when the snapshot is smaller (default 64 pages). */
  readonly compactAfterBytes?: number
}

/** The delta's share of `cacheBytes`: past it, a commit compacts. */
const DELTA_SHARE = 0.25

type StateError = DiskError | StateCorrupt

export interface ScavengeState {
  /** The last committed checkpoint; undefined when no transaction was ever committed. */
  readonly checkpoint: () => Checkpoint | undefined
  readonly originalStream: (name: string) => Effect.Effect<OriginalStreamData | undefined, StateError>
  readonly metastream: (name: string) => Effect.Effect<MetastreamData | undefined, StateError>
  /** The committed row when it is known without I/O, else NotResident. */
  readonly peekOriginalStream: (name: string) => OriginalStreamData | undefined | NotResident
  readonly peekMetastream: (name: string) => MetastreamData | undefined | NotResident
  /** undefined when the chunk has no weight row. */
  readonly chunkWeight: (logicalChunk: number) => number | undefined
  readonly chunkTimeRange: (logicalChunk: number) => ChunkTimeRange | undefined
  /** Up to `limit` Active original streams named strictly after `after` (all when undefined), ascending by name. */
  readonly activeStreams: (
    after: string | undefined,
    limit: number
  ) => Effect.Effect<ReadonlyArray<readonly [string, OriginalStreamData]>, StateError>
  /** Every weight row, by ascending logical chunk. */
  readonly allChunkWeights: () => ReadonlyArray<ChunkWeight>
  readonly counts: () => ScavengeStateCounts
  /**
   * Runs `body` as the only open transaction (others wait). `body` ends with `tx.commit(checkpoint)`; if
   * it fails, is interrupted or returns without committing, its changes are dropped (rollback).
   */
  readonly transaction: <A, E, R>(
    body: (tx: StateTransaction) => Effect.Effect<A, E, R>
  ) => Effect.Effect<A, E | StateError, R>
  /**
   * A transaction outside `transaction`, for a single owner that keeps one open between commits (the
   * session of StateSession.ts). It does not wait for, nor exclude, other transactions: never mix it with
   * concurrent `transaction` calls. `rollback` drops it.
   */
  readonly begin: () => StateTransaction & { readonly rollback: () => void }
  /** Closes the journal and the snapshot; later transactions fail with reason Closed. */
  readonly close: Effect.Effect<void, DiskError>
}

export const openScavengeState = (
  dir: string,
  options: ScavengeStateOptions
): Effect.Effect<ScavengeState, StateError, Disk> =>
  Effect.gen(function* () {
    const { pageSize, cacheBytes } = options
    if (!Number.isSafeInteger(pageSize) || pageSize < 1)
      return yield* Effect.dieMessage(`invalid scavenge state page size ${pageSize}`)
    if (!Number.isSafeInteger(cacheBytes) || cacheBytes < 0)
      return yield* Effect.dieMessage(`invalid scavenge state cache size ${cacheBytes}`)
    const disk = yield* Disk
    const files = stateFiles(dir)
    yield* disk.mkdir(dir)
    yield* removeLeftovers(files)

    const snapshot = yield* openSnapshot(files)
    const closeSnapshot = Effect.suspend(() =>
      snapshot.handle === undefined ? Effect.void : Effect.ignore(snapshot.handle.close)
    )
    const committed = new CommittedState(cacheBytes, snapshot)
    const journal = yield* Effect.tapError(disk.open(files.journal, { create: true }), () => closeSnapshot)
    const recovered = yield* Effect.gen(function* () {
      // The journal's directory entry must be durable before any commit relies on it.
      yield* disk.syncDir(dir)
      const recovered = yield* recoverJournal(journal, committed.snapshotSeq)
      for (const change of recovered.changes) committed.apply(change, yield* committed.resolveBases(change))
      return recovered
    }).pipe(Effect.tapError(() => Effect.zipRight(Effect.ignore(journal.close), closeSnapshot)))

    const writer = new JournalWriter(files, journal, committed, {
      pageSize,
      compactAfterBytes: options.compactAfterBytes ?? 64 * pageSize,
      lastSeq: recovered.lastSeq,
      journalBytes: recovered.end
    })
    // A journal that replayed into a delta past its share (a large last commit) is compacted at once.
    if (writer.needsCompaction()) yield* Effect.tapError(writer.compact(undefined), () => writer.close)
    const permit = yield* Effect.makeSemaphore(1)

    const newTransaction = () =>
      new Transaction(committed, (change, known) => Effect.provideService(writer.commit(change, known), Disk, disk))
    const transaction = <A, E, R>(body: (tx: StateTransaction) => Effect.Effect<A, E, R>) =>
      permit.withPermits(1)(
        Effect.suspend((): Effect.Effect<A, E | StateError, R> => {
          const refused = writer.refusal()
          if (refused !== undefined) return Effect.fail(refused)
          const tx = newTransaction()
          return Effect.ensuring(body(tx), Effect.sync(tx.rollback))
        })
      )

    const state: ScavengeState = {
      checkpoint: () => committed.checkpoint,
      originalStream: (name) => committed.originals.get(name),
      metastream: (name) => committed.metastreams.get(name),
      peekOriginalStream: (name) => committed.originals.peek(name),
      peekMetastream: (name) => committed.metastreams.peek(name),
      chunkWeight: (n) => committed.weights.get(n),
      chunkTimeRange: (n) => committed.timeRanges.get(n),
      activeStreams: (after, limit) => committed.activeStreams(after, limit),
      allChunkWeights: () => committed.allChunkWeights(),
      counts: () => ({
        ...committed.counts(),
        journalBytes: writer.journalBytes,
        snapshotBytes: committed.snapshotBytes
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
}

/** Appends committed transactions to the journal and compacts; fail-stop after any failed write. */
class JournalWriter {
  private failed: DiskError | StateCorrupt | undefined
  private closed = false

  constructor(
    private readonly files: StateFiles,
    private readonly journal: FileHandle,
    private readonly committed: CommittedState,
    private readonly at: WriterPosition
  ) {}

  get journalBytes(): number {
    return this.at.journalBytes
  }

  /** Why no transaction may start, if one may not. */
  refusal(): DiskError | StateCorrupt | undefined {
    if (this.closed) {
      return new DiskError({
        reason: "Closed",
        op: "transaction",
        path: this.files.journal,
        message: "the scavenge state is closed"
      })
    }
    return this.failed
  }

  needsCompaction(): boolean {
    const { cacheBytes } = this.committed
    if (this.committed.deltaBytes > cacheBytes * DELTA_SHARE) return true
    return (
      this.at.journalBytes > Math.max(this.at.compactAfterBytes, Math.min(this.committed.snapshotBytes, cacheBytes))
    )
  }

  commit(change: StateChange, known: Bases): Effect.Effect<void, StateError, Disk> {
    return Effect.uninterruptible(
      Effect.suspend(() => {
        const refused = this.refusal()
        if (refused !== undefined) return Effect.fail(refused)
        // Reads first (the delta's counts need the snapshot rows the change shadows): a failed read fails this
        // transaction only, before anything is written.
        return Effect.flatMap(this.committed.resolveBases(change, known), (bases) => {
          const seq = this.at.lastSeq + 1
          const frame = encodeFrame(seq, encodeChange(change), this.at.pageSize)
          return this.journal.write(this.at.journalBytes, frame).pipe(
            Effect.zipRight(this.journal.sync),
            Effect.zipRight(
              Effect.suspend(() => {
                this.at.lastSeq = seq
                this.at.journalBytes += frame.length
                // Rows that would take the delta past its share go straight into a new snapshot instead.
                if (
                  this.committed.deltaBytes + this.committed.deltaBytesOf(change) >
                  this.committed.cacheBytes * DELTA_SHARE
                ) {
                  return this.compact({ change, bases })
                }
                this.committed.apply(change, bases)
                return this.needsCompaction() ? this.compact(undefined) : Effect.void
              })
            ),
            Effect.tapError((error) => Effect.sync(() => (this.failed ??= error)))
          )
        })
      })
    )
  }

  /** A new snapshot of everything up to `lastSeq` (`pending`: a committed change not in the delta), then an empty journal. */
  compact(pending: PendingChange | undefined): Effect.Effect<void, StateError, Disk> {
    return Effect.gen(this, function* () {
      const loaded = yield* compactInto(this.files, this.committed, this.at.lastSeq, this.at.pageSize, pending)
      const previous = this.committed.install(loaded)
      if (pending !== undefined) this.committed.applyWrittenThrough(pending.change)
      if (previous !== undefined) yield* Effect.ignore(previous.close)
      yield* this.journal.truncate(0)
      yield* this.journal.sync
      this.at.journalBytes = 0
    })
  }

  get close(): Effect.Effect<void, DiskError> {
    return Effect.suspend(() => {
      if (this.closed) return Effect.void
      this.closed = true
      const snapshot = this.committed.handle
      return Effect.zipRight(this.journal.close, snapshot === undefined ? Effect.void : snapshot.close)
    })
  }
}

/**
 * The transaction log of one node: a sequence of chunk files plus the writer checkpoint (writer.chk), which
 * says how far the log was durable when it was last synced; recovery goes on from it by checksums.
 *
 * Writing (one writer at a time — the EventStore's writer fiber):
 *   `prepare(units)` assigns log positions and encodes every record of a batch into one buffer per chunk
 *   (pure, no I/O); a unit (one append) never straddles chunks: if it does not fit in the active chunk,
 *   the chunk is completed and the unit goes to the next one; a unit that fills its chunk exactly
 *   completes it in the same write. `write(batch)` then writes each segment with one write and syncs it
 *   once: then the batch is acknowledged (ONE FSYNC PER BATCH), and `writerPosition` (in memory) moves to
 *   its end. writer.chk is synced lazily: only once the log has grown `checkpointLagBytes` past it, at every
 *   chunk completion and at a clean close (`advance`). When a segment completes a chunk, the checkpoint
 *   first moves to the end of that chunk's data, the footer is written, and the next chunk is created
 *   durably before the checkpoint moves into it — so a completed chunk never holds bytes past the
 *   checkpoint. A batch spanning chunks is therefore atomic per unit, not as a whole: a failure or crash
 *   after a rollover can leave its first units durable (indeterminate, as any unacknowledged write).
 *
 * A write or sync error fails the batch (never acknowledged) and stops writes until `recover` has put the
 * log back, durably, where the last acknowledged batch left it — the state of unsynced bytes is unknown, so
 * nothing is written on top of them. Recovery goes back chunk by chunk (each step leaves a state that
 * open's recovery accepts, so a crash anywhere in it loses nothing acknowledged): a chunk the failed batch
 * created goes (checkpoint at its start first), the chunk it completed loses its footer (checkpoint at its
 * data end first), then the checkpoint is rewritten at the acknowledged position and the active chunk is
 * cut back to it. The caller retries `recover` until it succeeds (a full disk frees up); meanwhile every
 * write fails with the same StorageFailed.
 *
 * Reads go through a block cache that never holds bytes past a chunk's written data; a damaged record is
 * re-read once from disk (past the cache) before it is reported as StorageCorrupt.
 *
 * Completed chunks can be replaced by scavenged ones (`replaceChunks`, ChunkReplacer.ts): one file with a
 * position map covering one or several logical chunks; positions stay valid and removed records read as
 * undefined. A follower installs such a file received whole from its leader in place of its files of that
 * range, the active chunk included (`installChunk`, ChunkInstaller.ts).
 *
 * Recovery (`openTransactionLog`): temp files and older chunk versions are removed, and so are files inside
 * the range of a (verified) scavenged file that starts before them — leftovers of an interrupted
 * replacement (chunkPrecedence.ts); writer.chk must exist
 * when chunks do; every chunk before the one holding the checkpoint must be completed — except that a
 * checkpoint exactly at the end of a full chunk whose footer never became durable (a crash inside that
 * rollover) completes the chunk then; a footer is taken as it is only where the next chunk exists, and
 * elsewhere only if the file checksum matches (otherwise the bytes are data of an uncompleted chunk);
 * past the checkpoint, the active chunk's whole valid records up to the last whole write unit are kept (they
 * may be acknowledged: the checkpoint lags) and the checkpoint moves to their end, while a torn tail after
 * them is truncated, so it is never visible — and a bad record that a valid one follows is damage to
 * acknowledged data: open refuses (StorageCorrupt naming the chunk and position; tailRecovery.ts); at most
 * one chunk created ahead of the checkpoint is removed; anything else past the
 * checkpoint, and any chunk missing below it, is reported as corruption rather than guessed at. A checkpoint
 * inside the last file, a completed scavenged one, was left by a crash inside a chunk install after its
 * commit point: the log goes on after that file.
 */
import { type Context, Effect, Exit } from "effect"
import { Disk, assert, join, runNow, type DiskError, type Steps } from "@vellum/platform"
import { ByteWriter } from "../codec/bytes.js"
import { checksum, checksumUpdate } from "../codec/checksum.js"
import { InvalidRequest, StorageCorrupt, StorageFailed, writesRefused, type ReadError } from "../errors.js"
import { BLOCK_SIZE, BlockCache } from "./BlockCache.js"
import {
  completeChunkFile,
  createChunkFile,
  isCompleted,
  isScavenged,
  openChunkFile,
  physicalOffset,
  physicalOffsetAtOrAfter,
  verifyChunkFile,
  type ChunkFile
} from "./ChunkFile.js"
import { HEADER_SIZE, chunkFileName, encodeHeader } from "./chunkFormat.js"
import { chunkNames, resolveSuperseded } from "./chunkPrecedence.js"
import { openCheckpoint } from "./Checkpoint.js"
import { makeChunkReplacer, type ChunkReplacement, type ReplaceOptions } from "./ChunkReplacer.js"
import { mapMismatch } from "./PositionMap.js"
import {
  EventFlags,
  FRAME_OVERHEAD,
  RecordKind,
  decodeRecord,
  encodeRecord,
  framedLength,
  type LogRecord,
  type NewRecord
} from "./records.js"
import type { KeepRecord } from "./ChunkRewrite.js"
import { makeChunkInstaller, type ChunkPiece } from "./ChunkInstaller.js"
import { RecordCache } from "./RecordCache.js"
import { scanTail, type TailReport } from "./tailRecovery.js"

export type { TailReport } from "./tailRecovery.js"

/**
 * A new chunk's running checksum starts from the header it was created with, not from a read of it: a
 * read can bring bytes damaged on their way, and the footer would then disagree with a sound file forever.
 */
const headerChecksum = (chunk: ChunkFile): number => checksum(encodeHeader(chunk.header))

export interface LogConfig {
  readonly dir: string
  /** Logical bytes per chunk (256 MiB by default; a few KiB in the simulator). */
  readonly chunkSize: number
  readonly preallocate: boolean
  /** Recompute every completed chunk's checksum at open (slow on big logs). */
  readonly verifyOnOpen: boolean
  /** Bytes of the block read cache. */
  readonly cacheBytes: number
  /**
   * How far acknowledged data may lie past the durable writer checkpoint before the writer syncs the
   * checkpoint again (`DEFAULT_CHECKPOINT_LAG` when absent); also how far open looks for valid records
   * after a bad one (tailRecovery.ts).
   */
  readonly checkpointLagBytes?: number
}

/**
 * 16 MiB: a batch of 100-event appends from 64 clients (about 2 MiB) syncs the checkpoint about once in eight
 * batches, and an open after a crash reads at most this much past the checkpoint to decide its tail.
 */
export const DEFAULT_CHECKPOINT_LAG = 16 * 1024 * 1024

/** The records of one append: written atomically, within one chunk. */
export interface WriteUnit {
  readonly records: ReadonlyArray<NewRecord>
  /** Complete the active chunk after this unit (scavenge points do). */
  readonly completeChunkAfter?: boolean
}

interface Segment {
  readonly chunkNumber: number
  readonly dataOffset: number
  readonly bytes: Buffer
  readonly completeAfter: boolean
}

export interface PreparedBatch {
  readonly segments: ReadonlyArray<Segment>
  /** Log position of each record of each unit. */
  readonly positions: ReadonlyArray<ReadonlyArray<number>>
  /** Post position of each unit's last record. */
  readonly unitEnds: ReadonlyArray<number>
  readonly endPosition: number
}

export interface ScanResult {
  readonly records: ReadonlyArray<LogRecord>
  /** Where the next scan in the same direction continues. */
  readonly next: number
  /** True when the scan reached the limit (forward) or the start of the log (backward). */
  readonly reachedEnd: boolean
}

export type { ReadError } from "../errors.js"

export type { ChunkReplacement, ReplaceOptions } from "./ChunkReplacer.js"

/** `readRecordCached`'s answer when the bytes must come from disk (or need the careful path). */
export const NotCached: unique symbol = Symbol("NotCached")

export interface ReadRecordOptions {
  /**
   * Read from the file, leaving the block cache as it is: for whole-log work (scavenge calculation and index
   * execution confirm millions of records once each) that would otherwise evict what readers need and grow
   * the node's memory by the whole cache.
   */
  readonly uncached?: boolean
}

export interface TransactionLog {
  readonly config: LogConfig
  /**
   * End of the durable log: every record below it is synced (acknowledged writes end here). writer.chk may
   * lag behind it (it is synced lazily); open finds the records past it again (tailRecovery.ts).
   */
  readonly writerPosition: () => number
  /** What open found past the durable writer checkpoint (undefined when the active chunk was created at open). */
  readonly recovered: TailReport | undefined
  /** The chunk files, in order, one entry per file (the active one last); current after a replacement. */
  readonly chunks: () => ReadonlyArray<ChunkFile>
  /** The largest unit (sum of framed record lengths) that fits in a chunk. */
  readonly maxUnitBytes: number
  readonly prepare: (units: ReadonlyArray<WriteUnit>) => PreparedBatch
  readonly write: (batch: PreparedBatch) => Effect.Effect<void, StorageFailed>
  /**
   * The record at a position, if it is below `limit` and exists: undefined if scavenged away, or at the
   * end of a chunk's data (a record boundary with no record); StorageCorrupt where no record can start.
   */
  readonly readRecord: (
    position: number,
    limit: number,
    options?: ReadRecordOptions
  ) => Effect.Effect<LogRecord | undefined, ReadError>
  /**
   * `readRecord` without an Effect when the record's bytes are in the block cache and intact: the record
   * (or undefined where `readRecord` would give undefined), or `NotCached` — then use `readRecord`.
   */
  readonly readRecordCached: (position: number, limit: number) => LogRecord | undefined | typeof NotCached
  /**
   * Records with position ≥ from and < limit, in log order. `from` must be where a record or a chunk
   * starts (or a `next` of an earlier scan); `limit` may be anywhere.
   */
  readonly scanForward: (from: number, limit: number, maxCount: number) => Effect.Effect<ScanResult, ReadError>
  /**
   * Records with position < from (and < limit), newest first. Both must be record boundaries (where a
   * record starts or ends, a chunk boundary, the writer position, or a `next`): a record cannot be found
   * backwards from the middle of another.
   */
  readonly scanBackward: (from: number, limit: number, maxCount: number) => Effect.Effect<ScanResult, ReadError>
  /** The scans begun when called: an `Exit` when every span was in the block cache (platform runNow.ts). */
  readonly scanForwardNow: (from: number, limit: number, maxCount: number) => Effect.Effect<ScanResult, ReadError>
  readonly scanBackwardNow: (from: number, limit: number, maxCount: number) => Effect.Effect<ScanResult, ReadError>
  /**
   * Rewrites the completed files covering logical chunks firstChunk..lastChunk (firstChunk must start a
   * file, lastChunk end one) into ONE scavenged chunk keeping exactly the records `keep` accepts, at their
   * logical positions, and switches it in (crash-safe; see ChunkReplacer.ts). Chunk execution passes one
   * file and the scavenger's rule, merging several files and `() => true`. A range that is not made of
   * whole completed files (or touches the active chunk) is a defect (Effect.die). A disk error fails the
   * replacement and leaves the old files in use; it does not stop the writer.
   */
  readonly replaceChunks: <E = never>(
    firstChunk: number,
    lastChunk: number,
    keep: KeepRecord<E>,
    options?: ReplaceOptions
  ) => Effect.Effect<ChunkReplacement, StorageFailed | ReadError | E>
  /**
   * After a failed write: restores the last acknowledged state durably (see the module comment) and lets
   * writes in again; fails (and writes stay refused) while the disk still fails. A no-op when nothing failed.
   */
  readonly recover: Effect.Effect<void, StorageFailed>
  /** The chunk file holding a log position (undefined past the log). */
  readonly chunkAt: (position: number) => ChunkFile | undefined
  /**
   * Bytes [from, end) of one unscavenged chunk's data as they lie on disk (never written afterwards), from
   * the block cache if it holds them, else from the file without caching them: for replication, which sends
   * whole framed records. The caller keeps both within the chunk's written data.
   */
  readonly readBytes: (from: number, end: number) => Effect.Effect<Buffer, ReadError>
  /**
   * Writes framed records received from a leader at the end of the log, as one write (the caller checked
   * them), syncs and moves the checkpoint; `completeChunk` completes the active chunk after them.
   */
  readonly appendBytes: (bytes: Buffer, completeChunk: boolean) => Effect.Effect<void, StorageFailed>
  /**
   * Cuts the log back to `position` (a record boundary in unscavenged chunks) durably, as `recover` does:
   * later chunks go, the chunk holding it becomes the active one again (a cut at a completed chunk's data
   * end un-completes it; a cut at a chunk's start keeps the chunk before it). A failure leaves writes
   * refused until `recover` has finished the cut.
   */
  readonly truncate: (position: number) => Effect.Effect<void, StorageFailed>
  /**
   * Takes a piece of a completed scavenged chunk file a leader sent whole (ChunkInstaller.ts); with the last
   * piece the file is checked and switched in for this log's files of its range, which holds the writer
   * checkpoint, and the checkpoint moves to the next chunk's start. True once installed. InvalidRequest
   * (a piece out of order, a file that does not check out or fit) changes nothing; a disk error after the
   * switch's commit point refuses writes until `recover` has finished it.
   */
  readonly installChunk: (piece: ChunkPiece) => Effect.Effect<boolean, StorageFailed | InvalidRequest>
  /** Why writes are refused (a write failed and `recover` has not succeeded yet), or undefined. */
  readonly failure: () => StorageFailed | undefined
  readonly failed: () => string | undefined
  readonly cache: BlockCache
  readonly close: Effect.Effect<void>
}

/**
 * Scans decode the log one block at a time, in place: a span ends at a block boundary unless a record crosses
 * it (that record alone is then read whole). A span across cached blocks is a copy of them, and with spans of
 * 256 KiB a 100-event `$all` page copied ten times the bytes of its records.
 */
const blockStart = (offset: number): number => offset - (offset % BLOCK_SIZE)
/** How far a scan's disk read reaches past its span on a miss (the following spans are then cached). */
const SCAN_READ_AHEAD = 256 * 1024
// A read-ahead that ends inside a block would leave a partial block in the cache for every scan.
assert(SCAN_READ_AHEAD % BLOCK_SIZE === 0, "TransactionLog: the scan read-ahead is a whole number of cache blocks")

/** Opens (recovering) or creates the log in `config.dir`. `newChunkId` supplies chunk ids (from Random). */
export const openTransactionLog = (config: LogConfig, newChunkId: Effect.Effect<string>) =>
  Effect.gen(function* () {
    const disk = yield* Disk
    const cs = config.chunkSize
    yield* disk.mkdir(config.dir)
    // Temp files are leftovers of a chunk creation or replacement; so are older versions of a start,
    // removed below once the version that replaced them is known to be intact.
    const { latest, temps, older } = chunkNames(yield* disk.list(config.dir))
    for (const name of temps) yield* disk.remove(join(config.dir, name))

    const checkpoint = yield* openCheckpoint(join(config.dir, "writer.chk"), 0)
    const corrupt = (message: string, position?: number) =>
      new StorageCorrupt({ message: `${config.dir}: ${message}`, path: config.dir, position })
    if (!checkpoint.existed) {
      // Without writer.chk nobody knows how much of the log was acknowledged: starting from 0 would cut
      // the active chunk's data off. It is made durable before the first chunk is created, so chunks
      // without it were not left by a crash.
      if (latest.size > 0) return yield* Effect.fail(corrupt("writer.chk is missing but chunk files exist"))
      yield* disk.syncDir(config.dir)
    }

    const candidates: Array<ChunkFile> = []
    for (const start of [...latest.keys()].sort((a, b) => a - b)) {
      candidates.push(yield* openChunkFile(join(config.dir, latest.get(start)!), cs))
    }
    // Files a completed replacement covers are removed with the other repairs below.
    const cover = resolveSuperseded(candidates)
    if (typeof cover === "string") return yield* Effect.fail(corrupt(cover))
    const opened = cover.live
    // Removing superseded files or older versions leaves their replacement as the only copy of its
    // records: it must be intact first (a crash between a switch-in and those removals is rare, so this
    // costs little).
    const replacements = new Set(cover.covers)
    for (const { startNumber } of older) replacements.add(candidates.find((c) => c.header.startNumber === startNumber)!)
    for (const chunk of replacements) yield* verifyChunkFile(chunk)
    const byNumber: Array<ChunkFile | undefined> = []
    for (const chunk of opened) {
      if (chunk.header.startNumber !== byNumber.length) {
        return yield* Effect.fail(corrupt(`chunk ${byNumber.length} is missing (found ${chunk.path})`))
      }
      for (let n = chunk.header.startNumber; n <= chunk.header.endNumber; n++) byNumber[n] = chunk
    }

    let w = checkpoint.value()
    const n = Math.floor(w / cs)
    let active: ChunkFile | undefined = byNumber[n]
    // Chunks that start after the one holding the checkpoint.
    const beyond = opened.filter((c) => c.header.startNumber > (active?.header.endNumber ?? n - 1))
    if (beyond.length > 1 || beyond.some(isCompleted)) {
      return yield* Effect.fail(
        corrupt(`chunks exist past the writer checkpoint ${w}: ${beyond.map((c) => c.path).join(", ")}`, w)
      )
    }
    // Created ahead of the checkpoint by a crash mid-rollover: nothing in it was acknowledged. It is
    // removed only once the rest has been found consistent (recovery changes nothing on disk before).
    for (const extra of beyond) byNumber.length = extra.header.startNumber
    if (active === undefined && byNumber.length !== n) {
      // Every chunk below the checkpoint holds acknowledged records; creating chunk `byNumber.length` here
      // would silently move the checkpoint back over them.
      return yield* Effect.fail(
        corrupt(`chunk ${byNumber.length} is missing: the writer checkpoint ${w} is in chunk ${n}`, w)
      )
    }
    // A footer at the end of a chunk file is trusted as it is only where the next chunk exists (the writer
    // creates a chunk only after syncing its predecessor's footer). Where a crash mid-rollover leaves the
    // question open — the chunk holding the checkpoint, or the last chunk when the checkpoint is exactly
    // at its end — the file checksum must match too: the last 128 bytes of an uncompleted chunk are
    // record data, which a client can shape into a footer that passes its own CRC (the file checksum
    // covers the random chunk id, so it cannot be forged).
    const footerIsGenuine = (chunk: ChunkFile): Effect.Effect<boolean, DiskError> =>
      verifyChunkFile(chunk).pipe(
        Effect.as(true),
        Effect.catchTag("StorageCorrupt", () => Effect.succeed(false))
      )
    const notCompleted = (chunk: ChunkFile) => {
      chunk.footer = undefined
      chunk.posMap = undefined
      chunk.footerProblem = "its footer does not match its checksum"
    }
    const previous = active === undefined && n > 0 && w === n * cs ? byNumber[n - 1] : undefined
    if (previous !== undefined && isCompleted(previous) && !(yield* footerIsGenuine(previous))) notCompleted(previous)
    // The checkpoint is exactly at the end of a full chunk that has no (valid) footer: a crash hit the
    // rollover of a full chunk after the checkpoint moved and before the footer was synced (the
    // reference opens it the same way: EventStore/EventStore: src/EventStore.Core/TransactionLog/Chunks/TFChunkDb.cs).
    // The chunk's data is all acknowledged; it is completed below.
    const completeFull =
      previous !== undefined && !isCompleted(previous) && previous.header.endNumber === n - 1 ? previous : undefined
    if (completeFull !== undefined) {
      const size = yield* completeFull.handle.size
      if (size < HEADER_SIZE + cs) {
        return yield* Effect.fail(
          corrupt(
            `chunk ${completeFull.path} holds ${size - HEADER_SIZE} bytes, less than the writer checkpoint needs (${cs})`,
            w
          )
        )
      }
    }
    for (const chunk of opened) {
      if (chunk.header.endNumber < n && !isCompleted(chunk) && chunk !== completeFull) {
        return yield* Effect.fail(
          corrupt(
            `chunk ${chunk.path} before the writer checkpoint is not completed${chunk.footerProblem !== undefined ? ` (${chunk.footerProblem})` : ""}`,
            w
          )
        )
      }
    }
    if (active !== undefined && isCompleted(active) && !(yield* footerIsGenuine(active))) notCompleted(active)
    let activeSize = 0
    let tail: TailReport | undefined
    if (active !== undefined && isCompleted(active)) {
      const dataEnd = active.startPosition + active.footer!.logicalDataSize
      // A scavenged chunk installed whole over the range holding the checkpoint (ChunkInstaller.ts), by a
      // switch that a crash cut before the checkpoint moved past it: the log goes on after it.
      const installed = active.header.isScavenged && w >= active.startPosition && w <= dataEnd
      if (w !== dataEnd && !installed)
        return yield* Effect.fail(corrupt(`writer checkpoint ${w} is inside completed chunk ${active.path}`, w))
    } else if (active !== undefined) {
      const off = w - active.startPosition
      activeSize = yield* active.handle.size
      if (activeSize < HEADER_SIZE + off) {
        return yield* Effect.fail(
          corrupt(
            `chunk ${active.path} holds ${activeSize - HEADER_SIZE} bytes, less than the writer checkpoint needs (${off})`,
            w
          )
        )
      }
      // writer.chk is synced lazily: acknowledged records may lie past it, a torn write after them.
      const verdict = yield* scanTail(active, w, activeSize, cs, config.checkpointLagBytes ?? DEFAULT_CHECKPOINT_LAG)
      if (verdict._tag === "Damaged") return yield* Effect.fail(verdict.error)
      tail = verdict.report
    } else if (w !== n * cs) {
      return yield* Effect.fail(corrupt(`the chunk holding the writer checkpoint ${w} is missing`, w))
    }

    // The log is consistent: repair what the crash left.
    for (const old of cover.superseded) {
      yield* old.handle.close
      yield* disk.remove(old.path)
    }
    for (const { name } of older) yield* disk.remove(join(config.dir, name))
    for (const extra of beyond) {
      yield* extra.handle.close
      yield* disk.remove(extra.path)
    }
    if (completeFull !== undefined) {
      yield* completeFull.handle.truncate(HEADER_SIZE + cs)
      completeFull.dataSize = cs
      yield* completeChunkFile(completeFull, undefined)
    }
    let runningCrc: number | undefined
    if (active !== undefined && isCompleted(active)) {
      active = undefined // the rollover's next chunk is created below
      w = byNumber.length * cs
    } else if (active !== undefined) {
      // Everything past the last whole unit was never acknowledged: cut it off so it can never become visible.
      w = tail!.end
      const off = w - active.startPosition
      if (activeSize !== HEADER_SIZE + off) yield* active.handle.truncate(HEADER_SIZE + off)
      if (config.preallocate) yield* active.handle.truncate(HEADER_SIZE + cs)
      yield* active.handle.sync
      active.dataSize = off
    }
    if (active === undefined) {
      const startNumber = byNumber.length
      active = yield* createChunkFile({
        dir: config.dir,
        startNumber,
        chunkSize: cs,
        chunkId: yield* newChunkId,
        preallocate: config.preallocate
      })
      byNumber[startNumber] = active
      runningCrc = headerChecksum(active)
      w = active.startPosition
    }
    if (w !== checkpoint.value()) yield* checkpoint.write(w)
    yield* disk.syncDir(config.dir)
    if (config.verifyOnOpen) {
      for (const chunk of opened)
        if (isCompleted(chunk) && byNumber[chunk.header.startNumber] === chunk) yield* verifyChunkFile(chunk)
    }
    return makeLog(config, { checkpoint, position: w, byNumber, active, runningCrc, newChunkId, disk }, tail)
  })

/** The active chunk as the last acknowledged write left it. */
interface Acknowledged {
  readonly chunk: ChunkFile
  readonly dataSize: number
  readonly runningCrc: number | undefined
}

interface LogState {
  readonly checkpoint: {
    readonly value: () => number
    readonly write: (v: number) => Effect.Effect<void, DiskError>
    readonly close: Effect.Effect<void, DiskError>
  }
  /**
   * The end of the durable log (`writerPosition`): the checkpoint's value once it is synced, ahead of it
   * while it lags (see `advance`).
   */
  position: number
  readonly byNumber: Array<ChunkFile | undefined>
  active: ChunkFile
  runningCrc: number | undefined
  readonly newChunkId: Effect.Effect<string>
  readonly disk: Context.Tag.Service<Disk>
}

const makeLog = (config: LogConfig, state: LogState, recovered: TailReport | undefined): TransactionLog => {
  const cs = config.chunkSize
  const lag = config.checkpointLagBytes ?? DEFAULT_CHECKPOINT_LAG
  const cache = new BlockCache(config.cacheBytes)
  // A quarter of the block cache's budget again, for decoded records (RecordCache.ts says when it is dropped).
  const decoded = new RecordCache(Math.floor(config.cacheBytes / 4), cache)
  /** Set by a failed write; writes are refused until `recover` clears it. */
  let failure: StorageFailed | undefined
  /** Where the last acknowledged batch left the log: what `recover` restores. */
  let restorePoint: Acknowledged | undefined
  /** A checkpoint value recovery must write before its next step (it made the state need it). */
  let pendingCheckpoint: number | undefined
  /** The rest of a chunk install that failed after its commit point: what `recover` runs. */
  let pendingInstall: Effect.Effect<void, DiskError> | undefined

  const chunkFor = (position: number): ChunkFile | undefined => state.byNumber[Math.floor(position / cs)]

  const prepare = (units: ReadonlyArray<WriteUnit>): PreparedBatch => {
    const segments: Array<Segment> = []
    const positions: Array<Array<number>> = []
    const unitEnds: Array<number> = []
    let chunkNumber = state.active.header.startNumber
    let dataEnd = state.active.dataSize
    let segStart = dataEnd
    // The batch's size is known before encoding, so each segment's buffer is allocated once at its final
    // size and handed to the write as it is: growing a 64 KiB buffer by doubling and copying it out again
    // moved every byte of a large batch about three times.
    const unitSizes: Array<number> = []
    let unencoded = 0
    for (const unit of units) {
      let size = 0
      for (const record of unit.records) size += framedLength(record)
      // Open finds where units end by their flags (tailRecovery.ts), as a follower's slices do: a unit whose
      // last record did not say so would be cut as a torn one. (The planner seals every unit: BatchBegin on
      // its first event, BatchEnd on its last only, any other kind alone.)
      const last = unit.records[unit.records.length - 1]
      assert(
        last === undefined || last.kind !== RecordKind.Event || (last.flags & EventFlags.BatchEnd) !== 0,
        "TransactionLog: a unit's last record ends the unit (BatchEnd, or a record of another kind)"
      )
      unitSizes.push(size)
      unencoded += size
    }
    let out = new ByteWriter(Math.max(64, Math.min(unencoded, cs)))
    const closeSegment = (completeAfter: boolean) => {
      segments.push({ chunkNumber, dataOffset: segStart, bytes: out.buf.subarray(0, out.length), completeAfter })
      unencoded -= out.length
      if (completeAfter) {
        chunkNumber += 1
        dataEnd = 0
      }
      segStart = dataEnd
      out = new ByteWriter(Math.max(64, Math.min(unencoded, cs)))
    }
    for (let u = 0; u < units.length; u++) {
      const unit = units[u]!
      const size = unitSizes[u]!
      if (size > cs) throw new RangeError(`a write of ${size} bytes does not fit in a chunk of ${cs} bytes`)
      if (dataEnd + size > cs) closeSegment(true)
      const unitPositions: Array<number> = []
      for (const record of unit.records) {
        const position = chunkNumber * cs + dataEnd
        unitPositions.push(position)
        dataEnd += encodeRecord(out, record, position)
      }
      positions.push(unitPositions)
      unitEnds.push(chunkNumber * cs + dataEnd)
      // A full chunk is completed in the same write, so the checkpoint rests on a chunk boundary only
      // when the chunk before it is completed (recovery still handles a crash inside that rollover).
      if (unit.completeChunkAfter === true || dataEnd === cs) closeSegment(true)
    }
    if (out.length > 0) closeSegment(false)
    return { segments, positions, unitEnds, endPosition: chunkNumber * cs + dataEnd }
  }

  /**
   * Moves the end of the durable log and writes and syncs the writer checkpoint there: never past the synced
   * data of the active chunk (its bytes are synced before the checkpoint moves), and backwards only while
   * `recover` restores the state of the last acknowledged batch (`back`), which is the one time the log
   * shrinks on purpose. Every step that changes chunk files (a rollover, a cut, an install) moves it so.
   */
  const moveCheckpoint = (to: number, back: boolean) => {
    assert(
      to <= state.active.startPosition + state.active.dataSize,
      "TransactionLog: the checkpoint is never ahead of synced data"
    )
    assert(
      back || to >= state.position,
      "TransactionLog: the checkpoint moves back only while recovering a failed write"
    )
    return Effect.map(state.checkpoint.write(to), () => {
      state.position = to
    })
  }

  /**
   * One fsync per batch: a batch whose bytes are synced is acknowledged, and the durable log ends after it
   * (`position`) while writer.chk may stay behind — open finds the records past it by their checksums
   * (tailRecovery.ts). The checkpoint is synced again only once the log has grown `lag` bytes past it, so
   * acknowledged data never lies further than that past it (the window open searches for damage in).
   */
  const advance = (to: number) => {
    assert(
      to === state.active.startPosition + state.active.dataSize,
      "TransactionLog: the log ends where its synced data ends"
    )
    if (to - state.checkpoint.value() > lag) return moveCheckpoint(to, false)
    state.position = to
    return Effect.void
  }

  const rollover = Effect.gen(function* () {
    const chunk = state.active
    yield* moveCheckpoint(chunk.startPosition + chunk.dataSize, false)
    yield* completeChunkFile(chunk, state.runningCrc)
    const next = yield* createChunkFile({
      dir: config.dir,
      startNumber: chunk.header.endNumber + 1,
      chunkSize: cs,
      chunkId: yield* state.newChunkId,
      preallocate: config.preallocate
    })
    state.byNumber[next.header.startNumber] = next
    state.active = next
    state.runningCrc = headerChecksum(next)
    yield* moveCheckpoint(next.startPosition, false)
  })

  const writeSegments = (batch: PreparedBatch) =>
    Effect.gen(function* () {
      for (const segment of batch.segments) {
        const chunk = state.active
        assert(
          segment.chunkNumber === chunk.header.startNumber && segment.dataOffset === chunk.dataSize,
          "TransactionLog: writes only at the end of the log"
        )
        if (segment.bytes.length > 0) {
          yield* chunk.handle.write(HEADER_SIZE + segment.dataOffset, segment.bytes)
          if (state.runningCrc !== undefined) state.runningCrc = checksumUpdate(state.runningCrc, segment.bytes)
          chunk.dataSize += segment.bytes.length
          yield* chunk.handle.sync
        }
        if (segment.completeAfter) yield* rollover
      }
      const end = state.active.startPosition + state.active.dataSize
      assert(end === batch.endPosition, "TransactionLog: a write ends where it was prepared to end")
      if (state.position !== end) yield* advance(end)
    })

  const write = (batch: PreparedBatch): Effect.Effect<void, StorageFailed> =>
    Effect.suspend(() => {
      // Checked when the write runs, not when it is built: a write built before a failure must not run.
      if (failure !== undefined) return Effect.fail(failure)
      const acknowledged: Acknowledged = {
        chunk: state.active,
        dataSize: state.active.dataSize,
        runningCrc: state.runningCrc
      }
      return refuseOnFailure(writeSegments(batch), acknowledged)
    })

  /** A change of the log that failed: writes are refused until `recover` has restored `point`. */
  const refuseOnFailure = (change: Effect.Effect<void, DiskError, Disk>, point: Acknowledged) =>
    change.pipe(
      Effect.provideService(Disk, state.disk),
      Effect.catchAll((error) => {
        failure = writesRefused(error)
        restorePoint = point
        return Effect.fail(failure)
      })
    )

  /** Cuts a chunk's file back to its data (a footer, whole or partial, goes) and syncs it. */
  const dropFooter = (chunk: ChunkFile) =>
    Effect.gen(function* () {
      yield* chunk.handle.truncate(HEADER_SIZE + chunk.dataSize)
      yield* chunk.handle.sync
      chunk.footer = undefined
    })

  /**
   * The steps of `recover`, each durable before the next and each leaving a state open's recovery accepts.
   * Retried from the start after a failure: every step is safe to run again.
   */
  const restore = (point: Acknowledged) =>
    Effect.gen(function* () {
      const disk = state.disk
      // A chunk a failed rollover left half created (after the active one, never in use) goes first: it
      // lies past the checkpoint, and once the chunks before it go it would sit past a gap.
      const next = join(config.dir, chunkFileName(state.active.header.endNumber + 1, 0))
      let removed = false
      for (const path of [`${next}.tmp`, next]) {
        if (yield* disk.exists(path)) {
          yield* disk.remove(path)
          removed = true
        }
      }
      if (removed) yield* disk.syncDir(config.dir)
      for (;;) {
        if (pendingCheckpoint !== undefined) {
          yield* moveCheckpoint(pendingCheckpoint, true)
          pendingCheckpoint = undefined
        }
        const chunk = state.active
        // The checkpoint is within this chunk's data or at its end here, so without its footer the chunk
        // is simply the active one (or, full, one open completes again).
        yield* dropFooter(chunk)
        if (chunk === point.chunk) break
        // A chunk the failed batch created: back to its start (the previous chunk is still completed),
        // then it goes.
        const previous = state.byNumber[chunk.header.startNumber - 1]!
        yield* moveCheckpoint(chunk.startPosition, true)
        if (yield* disk.exists(chunk.path)) yield* disk.remove(chunk.path)
        yield* disk.syncDir(config.dir)
        cache.evictFile(chunk.fileId)
        yield* Effect.ignore(chunk.handle.close)
        state.byNumber.length = chunk.header.startNumber
        // The previous chunk becomes the active one again: the checkpoint goes to its data end (where a
        // completed chunk may end) before its footer is dropped.
        state.active = previous
        state.runningCrc = undefined
        pendingCheckpoint = previous.startPosition + previous.dataSize
      }
      // Always written, even when the value looks unchanged: the failed write of the checkpoint may be on disk.
      const chunk = point.chunk
      yield* moveCheckpoint(chunk.startPosition + point.dataSize, true)
      yield* chunk.handle.truncate(HEADER_SIZE + point.dataSize)
      if (config.preallocate) yield* chunk.handle.truncate(HEADER_SIZE + cs)
      yield* chunk.handle.sync
      chunk.dataSize = point.dataSize
      state.runningCrc = point.runningCrc
      // Blocks read while the failed batch's bytes were there must not be served again.
      cache.evictFile(chunk.fileId)
    })

  const recover: Effect.Effect<void, StorageFailed> = Effect.suspend(() => {
    if (failure === undefined) return Effect.void
    // A chunk install that failed after its commit point is finished; any other failure is undone.
    const install = pendingInstall
    const point = restorePoint
    const repair = install ?? (point === undefined ? undefined : restore(point))
    if (repair === undefined) return Effect.void
    return repair.pipe(
      Effect.provideService(Disk, state.disk),
      Effect.matchEffect({
        onFailure: (error) => {
          failure = writesRefused(error)
          return Effect.fail(failure)
        },
        onSuccess: () =>
          Effect.sync(() => {
            failure = undefined
            if (install !== undefined) pendingInstall = undefined
            else restorePoint = undefined
          })
      })
    )
  })

  const readBytes = (from: number, end: number): Effect.Effect<Buffer, ReadError> =>
    Effect.suspend(() => {
      const chunk = chunkFor(from)
      assert(
        chunk !== undefined && !isScavenged(chunk) && end <= chunk.startPosition + chunk.dataSize,
        "TransactionLog: raw bytes come from one unscavenged chunk's data"
      )
      const base = HEADER_SIZE - chunk.startPosition
      // Past the cache when it does not hold them: a follower catching up reads the whole log once, which
      // would push every other block out of the cache (and copy each into it on the way).
      const cached = cache.tryRange(chunk.fileId, base + from, base + end)
      return cached !== undefined ? Effect.succeed(cached) : readUncached(chunk, base + from, base + end)
    })

  const appendBytes = (bytes: Buffer, completeChunk: boolean): Effect.Effect<void, StorageFailed> =>
    Effect.suspend(() => {
      const chunk = state.active
      const dataEnd = chunk.dataSize + bytes.length
      assert(dataEnd <= cs, "TransactionLog: received bytes fit in the active chunk")
      // A full chunk is completed in the same write, as `prepare` does for the leader.
      const completeAfter = completeChunk || dataEnd === cs
      return write({
        segments: [{ chunkNumber: chunk.header.startNumber, dataOffset: chunk.dataSize, bytes, completeAfter }],
        positions: [],
        unitEnds: [],
        endPosition: completeAfter ? chunk.endPosition : chunk.startPosition + dataEnd
      })
    })

  const truncate = (position: number): Effect.Effect<void, StorageFailed> =>
    Effect.suspend(() => {
      if (failure !== undefined) return Effect.fail(failure)
      assert(position >= 0 && position <= state.position, "TransactionLog: truncation stays within the log")
      if (position === state.position) return Effect.void
      // At the data end of a completed chunk, the chunk's completion is cut too (another log may go on
      // writing in it); at the next chunk's start it is kept.
      const chunk = chunkFor(position)
      assert(
        chunk !== undefined && !isScavenged(chunk) && chunk.header.startNumber === chunk.header.endNumber,
        "TransactionLog: truncation only cuts unscavenged chunks"
      )
      const point: Acknowledged = {
        chunk,
        dataSize: position - chunk.startPosition,
        runningCrc: position === chunk.startPosition ? headerChecksum(chunk) : undefined
      }
      // On a failure `recover` finishes the cut: every step of `restore` is safe to run again.
      return refuseOnFailure(restore(point), point)
    })

  /** A frame decoded during a scan, or undefined when the bytes are not a valid record. */
  const decodeAt = (buf: Buffer, offset: number, limit: number) => {
    const result = decodeRecord(buf, offset, limit)
    return result.ok ? result : undefined
  }

  const corruptAt = (chunk: ChunkFile, position: number, problem: string) =>
    new StorageCorrupt({
      message: `${chunk.path}: the record at log position ${position} is damaged (${problem})`,
      path: chunk.path,
      position
    })

  /**
   * Bytes [start, end) of a chunk file through the block cache, never past the chunk's written data
   * (`HEADER_SIZE + dataSize`): what lies beyond is preallocated zeros, a footer or nothing.
   */
  const readRange = (
    chunk: ChunkFile,
    start: number,
    end: number,
    fetch?: { readonly start: number; readonly end: number }
  ) => cache.range(chunk.fileId, chunk.handle, start, end, HEADER_SIZE + chunk.dataSize, fetch)

  /**
   * Runs a read; when it meets a damaged record, forgets that chunk's cached blocks and reads once more
   * from disk, so bytes damaged on their way from the disk (a flipped bit in transit) do not stay cached
   * and turn a transient error into a permanent one. Damage that is on disk is reported.
   */
  const rereadIfDamaged = <A>(read: () => Effect.Effect<A, ReadError>): Effect.Effect<A, ReadError> => {
    const first = read()
    // A read that answered from memory stays settled (runNow).
    if (Exit.isExit(first) && Exit.isSuccess(first)) return first
    return Effect.catchTag(first, "StorageCorrupt", (error) => {
      const chunk = state.byNumber.find((c) => c !== undefined && c.path === error.path)
      if (chunk === undefined) return Effect.fail(error)
      cache.evictFile(chunk.fileId)
      return read()
    })
  }

  /** Bytes [start, end) straight from the file (bounded as `readRange`), leaving the block cache alone. */
  const readUncached = (chunk: ChunkFile, start: number, end: number) =>
    chunk.handle.read(start, Math.max(0, Math.min(end, HEADER_SIZE + chunk.dataSize) - start))

  const readRecordOnce = (
    position: number,
    limit: number,
    uncached: boolean
  ): Effect.Effect<LogRecord | undefined, ReadError> =>
    Effect.suspend(() => {
      if (position < 0 || position >= limit) return Effect.succeed(undefined)
      const chunk = chunkFor(position)
      if (chunk === undefined) return Effect.succeed(undefined)
      const off = physicalOffset(chunk, position)
      if (off === undefined) return Effect.succeed(undefined)
      if (off instanceof StorageCorrupt) return Effect.fail(off)
      const dataEnd = HEADER_SIZE + chunk.dataSize
      // The end of a chunk's data is a record boundary (the last record's post position) with no record.
      if (off === dataEnd) return Effect.succeed(undefined)
      // A position in the gap after it is not where any record is.
      if (off + 8 > dataEnd) return Effect.fail(corruptAt(chunk, position, "no record there: past the chunk's data"))
      if (!uncached) {
        const hit = decoded.get(position)
        if (hit !== undefined) return Effect.succeed(hit)
      }
      const epoch = decoded.epoch
      const read = uncached ? readUncached : readRange
      return Effect.flatMap(read(chunk, off, off + 1024), (head) => {
        if (head.length < 8) return Effect.fail(corruptAt(chunk, position, "truncated"))
        const total = head.readUInt32LE(0) + FRAME_OVERHEAD
        const full = total <= head.length ? Effect.succeed(head) : read(chunk, off, off + total)
        // `position` is checked against the record's own: an offset from a damaged position map is caught here.
        return Effect.flatMap(full, (buf) => {
          const result = decodeRecord(buf, 0, buf.length, position)
          if (!result.ok) return Effect.fail(corruptAt(chunk, position, result.problem))
          return Effect.succeed(uncached ? result.record : decoded.store(result.record, epoch))
        })
      })
    })

  const readRecordCached = (position: number, limit: number): LogRecord | undefined | typeof NotCached => {
    if (position < 0 || position >= limit) return undefined
    const chunk = chunkFor(position)
    if (chunk === undefined) return undefined
    const off = physicalOffset(chunk, position)
    if (off === undefined) return undefined
    // A damaged map: the careful path fails with StorageCorrupt.
    if (off instanceof StorageCorrupt) return NotCached
    const dataEnd = HEADER_SIZE + chunk.dataSize
    if (off === dataEnd) return undefined
    if (off + 8 > dataEnd) return NotCached
    const hit = decoded.get(position)
    if (hit !== undefined) return hit
    const epoch = decoded.epoch
    // Most records lie inside one cached block: decode straight from it, without a view or a copy.
    const block = cache.blockHolding(chunk.fileId, off, off + 8)
    if (block === undefined) return NotCached
    const inBlock = off % BLOCK_SIZE
    const total = block.readUInt32LE(inBlock) + FRAME_OVERHEAD
    if (off + total > dataEnd) return NotCached
    if (inBlock + total <= block.length) {
      const result = decodeRecord(block, inBlock, inBlock + total, position)
      return result.ok ? decoded.store(result.record, epoch) : NotCached
    }
    const buf = cache.tryRange(chunk.fileId, off, off + total)
    if (buf === undefined) return NotCached
    const result = decodeRecord(buf, 0, buf.length, position)
    return result.ok ? decoded.store(result.record, epoch) : NotCached
  }

  /** Logical end of the data of a chunk as visible under `limit`. */
  const visibleEnd = (chunk: ChunkFile, limit: number): number =>
    Math.min(
      limit,
      chunk.footer !== undefined
        ? chunk.startPosition + chunk.footer.logicalDataSize
        : chunk.startPosition + chunk.dataSize
    )

  /** A forward scan as steps: plain code while every span is in the block cache (platform runNow.ts). */
  function* scanForwardSteps(from: number, limit: number, maxCount: number): Steps<ScanResult, ReadError> {
    {
      const records: Array<LogRecord> = []
      let pos = Math.max(0, from)
      while (records.length < maxCount && pos < limit) {
        const chunk = chunkFor(pos)
        if (chunk === undefined) break
        const end = visibleEnd(chunk, limit)
        if (pos >= end) {
          // The end of the written log (a `limit` past it): stop here, where later records will start,
          // rather than at the chunk's end, which a later scan from `next` would skip them to.
          if (chunk.footer === undefined && end < limit) break
          pos = chunk.endPosition
          continue
        }
        const boundary = physicalOffsetAtOrAfter(chunk, pos)
        if (boundary instanceof StorageCorrupt) return yield* boundary
        const physStart = boundary.offset
        const physEnd = isScavenged(chunk) ? HEADER_SIZE + chunk.dataSize : HEADER_SIZE + (end - chunk.startPosition)
        if (physStart >= physEnd) {
          pos = chunk.endPosition
          continue
        }
        // At least a record's length prefix, even when `limit` cuts the record right after its start.
        const spanEnd = Math.max(physStart + 8, Math.min(physEnd, blockStart(physStart) + BLOCK_SIZE))
        const epoch = decoded.epoch
        // Where a record's bytes start is its position in an unscavenged chunk: decoded records are looked up.
        const spanPosition = isScavenged(chunk) ? -1 : chunk.startPosition + physStart - HEADER_SIZE
        const span = yield* readRange(chunk, physStart, spanEnd, {
          start: physStart,
          end: Math.min(physEnd, physStart + SCAN_READ_AHEAD)
        })
        let at = 0
        let progressed = false
        while (records.length < maxCount && at + 8 <= span.length) {
          const total = span.readUInt32LE(at) + FRAME_OVERHEAD
          if (at + total > span.length) {
            if (at === 0) {
              // A record longer than the scan span, or one that starts below `limit` and ends past it
              // (`limit` need not be a record boundary): read it whole, up to the chunk's data end.
              const whole = yield* readRange(chunk, physStart, physStart + total)
              const result = decodeAt(whole, 0, whole.length)
              if (result === undefined) return yield* Effect.fail(corruptAt(chunk, pos, "frame"))
              const mismatch = mapMismatch(boundary.at, result.record.logPosition)
              if (mismatch !== undefined) return yield* Effect.fail(corruptAt(chunk, pos, mismatch))
              // In a scavenged chunk the bytes run past `limit`: a record at or after it is not handed out.
              if (result.record.logPosition >= end) {
                pos = end
                break
              }
              records.push(result.record)
              pos = nextLogical(chunk, result.record.logPosition, total)
              progressed = true
            }
            break
          }
          const hit = spanPosition < 0 ? undefined : decoded.get(spanPosition + at)
          let record: LogRecord
          if (hit !== undefined) record = hit
          else {
            const result = decodeAt(span, at, span.length)
            if (result === undefined) return yield* Effect.fail(corruptAt(chunk, pos, "frame"))
            // Kept only where it says it is (never under a position claimed by damaged bytes).
            const placed = spanPosition >= 0 && result.record.logPosition === spanPosition + at
            record = placed ? decoded.store(result.record, epoch) : result.record
          }
          const mismatch = at === 0 ? mapMismatch(boundary.at, record.logPosition) : undefined
          if (mismatch !== undefined) return yield* Effect.fail(corruptAt(chunk, pos, mismatch))
          if (record.logPosition >= end) {
            pos = end
            break
          }
          records.push(record)
          pos = nextLogical(chunk, record.logPosition, total)
          at += total
          progressed = true
        }
        if (!progressed && pos < end)
          return yield* Effect.fail(corruptAt(chunk, pos, "no record where one was expected"))
      }
      // Never hand out a position in the gap at the end of a completed chunk as `next`: it is not a record
      // boundary (a reader told to continue there would be refused); continue at the next chunk instead.
      const last = chunkFor(pos)
      if (last?.footer !== undefined && pos < limit && pos >= last.startPosition + last.footer.logicalDataSize) {
        pos = Math.min(last.endPosition, limit)
      }
      return { records, next: pos, reachedEnd: pos >= limit }
    }
  }

  /** Logical position just after a record (for a scavenged chunk: the next surviving record is searched from here). */
  const nextLogical = (chunk: ChunkFile, position: number, framed: number): number =>
    isScavenged(chunk) ? position + 1 : position + framed

  /** A backward scan as steps (as `scanForwardSteps`). */
  function* scanBackwardSteps(from: number, limit: number, maxCount: number): Steps<ScanResult, ReadError> {
    {
      const records: Array<LogRecord> = []
      // Not past the end of the written log: there is no chunk to start from there.
      let pos = Math.min(from, limit, state.active.startPosition + state.active.dataSize)
      while (records.length < maxCount && pos > 0) {
        const chunk = chunkFor(pos - 1)
        if (chunk === undefined) break
        const end = visibleEnd(chunk, limit)
        if (pos > end) pos = end
        if (pos <= chunk.startPosition) {
          pos = chunk.startPosition
          if (pos === 0) break
          continue
        }
        // Physical end of the data before `pos`.
        const boundary = physicalOffsetAtOrAfter(chunk, pos)
        if (boundary instanceof StorageCorrupt) return yield* boundary
        const physEnd = boundary.offset
        if (physEnd <= HEADER_SIZE) {
          pos = chunk.startPosition
          continue
        }
        const spanStart = Math.max(HEADER_SIZE, Math.min(blockStart(physEnd - 1), physEnd - 8))
        let span = yield* readRange(chunk, spanStart, physEnd, {
          start: Math.max(HEADER_SIZE, physEnd - SCAN_READ_AHEAD),
          end: physEnd
        })
        let at = span.length
        while (records.length < maxCount && at > 0) {
          if (at < 4) break
          const total = span.readUInt32LE(at - 4) + FRAME_OVERHEAD
          if (total > at) {
            if (at === span.length) {
              // A record longer than the span: fetch it whole (a damaged suffix, or an end from a damaged
              // position map, can claim more bytes than the chunk holds before it).
              if (physEnd - total < HEADER_SIZE) return yield* Effect.fail(corruptAt(chunk, pos, "suffix length"))
              span = yield* readRange(chunk, physEnd - total, physEnd)
              at = span.length
              if (total > at) return yield* Effect.fail(corruptAt(chunk, pos, "suffix length"))
            } else break
          }
          const result = decodeAt(span, at - total, at)
          if (result === undefined) return yield* Effect.fail(corruptAt(chunk, pos, "frame"))
          // The record ending where the map's boundary is must be the entry the map puts before it.
          const mismatch = at === span.length ? mapMismatch(boundary.before, result.record.logPosition) : undefined
          if (mismatch !== undefined) return yield* Effect.fail(corruptAt(chunk, pos, mismatch))
          records.push(result.record)
          pos = result.record.logPosition
          at -= total
        }
        if (at === span.length && records.length < maxCount)
          return yield* Effect.fail(corruptAt(chunk, pos, "no record where one was expected"))
      }
      return { records, next: pos, reachedEnd: pos <= 0 }
    }
  }

  const readRecord = (position: number, limit: number, options?: ReadRecordOptions) =>
    rereadIfDamaged(() => readRecordOnce(position, limit, options?.uncached === true))
  const scanForwardNow = (from: number, limit: number, maxCount: number) =>
    rereadIfDamaged(() => runNow(scanForwardSteps(from, limit, maxCount)))
  const scanBackwardNow = (from: number, limit: number, maxCount: number) =>
    rereadIfDamaged(() => runNow(scanBackwardSteps(from, limit, maxCount)))
  const scanForward = (from: number, limit: number, maxCount: number) =>
    Effect.suspend(() => scanForwardNow(from, limit, maxCount))
  const scanBackward = (from: number, limit: number, maxCount: number) =>
    Effect.suspend(() => scanBackwardNow(from, limit, maxCount))

  const replacer = makeChunkReplacer({
    dir: config.dir,
    chunkSize: cs,
    byNumber: state.byNumber,
    active: () => state.active,
    cache,
    disk: state.disk,
    failed: () => failure?.message
  })

  /**
   * Replacements run side by side (a scavenge's threads); an install's switch runs alone, so no
   * replacement is writing a file of its range meanwhile and none picks its sources from a half-made list.
   */
  const SWITCH_PERMITS = 1024
  const switches = Effect.unsafeMakeSemaphore(SWITCH_PERMITS)
  let installs = 0

  const replaceChunks: TransactionLog["replaceChunks"] = (firstChunk, lastChunk, keep, options) =>
    switches.withPermits(1)(
      Effect.suspend(() => {
        // A scavenge that chose its range before a chunk was installed over it: the run fails, not the node.
        const refusal = installs > 0 ? replacer.refusal(firstChunk, lastChunk) : undefined
        if (refusal !== undefined)
          return Effect.fail(
            new StorageFailed({ message: `a chunk installed from the leader changed the range: ${refusal}` })
          )
        return replacer.replaceChunks(firstChunk, lastChunk, keep, options)
      })
    )

  const installer = makeChunkInstaller({
    dir: config.dir,
    chunkSize: cs,
    byNumber: state.byNumber,
    writerPosition: () => state.position,
    disk: state.disk,
    retire: replacer.retire,
    continueAfter: (installed) =>
      Effect.gen(function* () {
        const startNumber = installed.header.endNumber + 1
        if (state.active.header.startNumber !== startNumber) {
          const next = yield* createChunkFile({
            dir: config.dir,
            startNumber,
            chunkSize: cs,
            chunkId: yield* state.newChunkId,
            preallocate: config.preallocate
          })
          state.byNumber[startNumber] = next
          state.active = next
          state.runningCrc = headerChecksum(next)
        }
        yield* moveCheckpoint(state.active.startPosition, false)
      })
  })

  const installChunk = (piece: ChunkPiece): Effect.Effect<boolean, StorageFailed | InvalidRequest> =>
    Effect.suspend(() => {
      if (failure !== undefined) return Effect.fail(failure)
      const last = piece.offset + piece.bytes.length >= piece.fileSize
      const receive = installer.receive(piece)
      return Effect.flatMap(last ? switches.withPermits(SWITCH_PERMITS)(receive) : receive, (received) => {
        if (received._tag === "Partial") return Effect.succeed(false)
        installs++
        return Effect.catchAll(Effect.as(received.finish, true), (error) => {
          failure = writesRefused(error)
          pendingInstall = received.finish
          return Effect.fail(failure)
        })
      })
    })

  const close = Effect.gen(function* () {
    yield* installer.abandon
    yield* replacer.closeRetired
    const seen = new Set<ChunkFile>()
    for (const chunk of state.byNumber) {
      if (chunk === undefined || seen.has(chunk)) continue
      seen.add(chunk)
      yield* Effect.ignore(chunk.handle.close)
    }
    // A clean stop leaves writer.chk at the end of the log (unless a failed write left it in doubt).
    if (failure === undefined && state.position !== state.checkpoint.value())
      yield* Effect.ignore(Effect.provideService(moveCheckpoint(state.position, false), Disk, state.disk))
    yield* Effect.ignore(state.checkpoint.close)
  })

  const maxUnitBytes = cs
  return {
    config,
    writerPosition: () => state.position,
    recovered,
    chunks: () => [...new Set(state.byNumber.filter((c): c is ChunkFile => c !== undefined))],
    maxUnitBytes,
    prepare,
    write,
    readRecord,
    readRecordCached,
    scanForward,
    scanBackward,
    scanForwardNow,
    scanBackwardNow,
    replaceChunks,
    chunkAt: chunkFor,
    readBytes,
    appendBytes,
    truncate,
    installChunk,
    recover,
    failure: () => failure,
    failed: () => (failure === undefined ? undefined : `${failure.message} (${failure.detail ?? "no detail"})`),
    cache,
    close
  }
}

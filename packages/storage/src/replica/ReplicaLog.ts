/**
 * ReplicaLog: what the cluster needs of one node's log to replicate it (the store's `replica`). Only a store
 * opened with `clustered: true` has it; a single node commits each write as soon as it is durable.
 *
 * Positions, and what each one means on a clustered node:
 * - writer checkpoint: the end of what this node has durably written (its own writes when it leads,
 *   what it received when it follows), always at the end of a whole write unit (an append, an epoch, a
 *   scavenge point), never inside one;
 * - committed: the end of what this node has indexed and serves to readers. A quorum holds everything
 *   below it. It only grows, never passes the writer checkpoint, and is persisted lazily (a lagging copy
 *   only hides events until the leader says again how far the cluster has committed).
 * Between the two lies the uncommitted tail: replicated or written, not yet known to be on a quorum.
 * Only the tail may be truncated.
 */
import type { Effect } from "effect"
import type { ReadError } from "../log/TransactionLog.js"
import type { ChunkPiece } from "../log/ChunkInstaller.js"
import type { InvalidRequest, StorageCorrupt, StorageFailed } from "../errors.js"
import type { WriteError } from "../streams/planner.js"

/** One epoch record of the log: where it is, its number (the election term that wrote it) and its id. */
export interface EpochRef {
  readonly epochNumber: number
  readonly position: number
  readonly epochId: string
}

/**
 * A contiguous run of whole records as they lie in the log (their framing included), starting at
 * `position` and ending at `end`, which is the end of a write unit. `completesChunk`: the chunk is
 * completed right after them (the leader rolled over, or a scavenge point closed the chunk), so the next
 * slice starts at the next chunk's start.
 */
export interface RawSlice {
  readonly position: number
  readonly end: number
  readonly bytes: Uint8Array
  readonly completesChunk: boolean
}

/**
 * A piece of a completed scavenged chunk file, which is sent whole (its bytes as they lie on disk, in
 * pieces) because its records no longer lie at contiguous positions. The file covers logical chunks
 * `startNumber..endNumber`; `chunkId` (its header's) names the file, so pieces of two files are never
 * mixed; `offset` is where `bytes` lie in the file of `fileSize` bytes. A follower installs the file once
 * it has all of it, and its log then goes on at `(endNumber + 1) × chunkSize`.
 */
export interface RawChunk extends ChunkPiece {
  readonly _tag: "RawChunk"
}

/** Whether what `readRaw` gave is a piece of a chunk file rather than a slice of records. */
export const isRawChunk = (piece: RawSlice | RawChunk): piece is RawChunk => "_tag" in piece

/** The leader's answer to "is this write on a quorum yet": resolves once it is, fails once it will not be. */
export type CommitGate = (endPosition: number) => Effect.Effect<void, NotLeading>

/** The node stopped leading while a write waited for its quorum (the write's outcome is unknown). */
export interface NotLeading {
  readonly _tag: "NotLeading"
}

export interface ReplicaLog {
  readonly chunkSize: number
  readonly writerCheckpoint: () => number
  readonly committed: () => number
  /** The newest `max` epochs of the log, newest first, the uncommitted tail's included. */
  readonly epochs: (max: number) => Effect.Effect<ReadonlyArray<EpochRef>, ReadError>
  /**
   * Starts leading in `term`: from now on every write round waits for `gate` before it is indexed and
   * answered. Writes this node's epoch record (number `term`, greater than every epoch in its log) first;
   * succeeds once that epoch is committed, with everything before it (the tail from earlier terms). It
   * waits as long as the node leads (no commit timeout); a failed gate or `stopLeading` ends it with
   * CommitTimeout. A term not greater than the log's last epoch is refused (InvalidRequest).
   */
  readonly lead: (term: number, leaderInstanceId: string, gate: CommitGate) => Effect.Effect<EpochRef, WriteError>
  /** Stops leading: new client writes are refused, and a round waiting for its quorum ends as CommitTimeout. */
  readonly stopLeading: Effect.Effect<void>
  /**
   * Up to about `maxBytes` of whole records from `from` (a record boundary), ending at a unit's end, never
   * past the writer checkpoint. Where `from` lies in a scavenged chunk, the piece of that chunk's file at
   * `chunkOffset` (0 when absent), of at most `maxBytes`, instead. InvalidRequest: `from` is not a record
   * boundary of this log.
   */
  readonly readRaw: (
    from: number,
    maxBytes: number,
    chunkOffset?: number
  ) => Effect.Effect<RawSlice | RawChunk | undefined, ReadError | InvalidRequest>
  /** Writes a slice received from the leader at this node's writer checkpoint (`slice.position` must equal it), durably. */
  readonly appendRaw: (slice: RawSlice) => Effect.Effect<void, StorageFailed | InvalidRequest>
  /**
   * Takes a piece of a scavenged chunk file from the leader; pieces come in order from offset 0 (a piece at
   * 0 starts the file again). With the last piece the file is checked (its header, footer, position map
   * and whole-file checksum) and installed, durably, in place of this log's files of its range, which must
   * hold this node's writer checkpoint; the writer checkpoint then moves to the range's end. Records this
   * node held in the range that the file lacks were removed by the leader's scavenge: they read as absent,
   * as after a local scavenge. A piece of a range this node already holds whole is ignored (an install
   * that failed after its commit point is finished by the next change of the log). InvalidRequest: a piece
   * out of order, a file that does not check out or does not cover the writer checkpoint (nothing changes).
   */
  readonly installChunk: (piece: RawChunk) => Effect.Effect<void, StorageFailed | InvalidRequest>
  /** Indexes everything up to `position` (capped at the writer checkpoint) and makes it readable. */
  readonly commitTo: (position: number) => Effect.Effect<void, ReadError | StorageCorrupt>
  /** Cuts the uncommitted tail back to `position` (a record boundary, at or past `committed`), durably. */
  readonly truncate: (position: number) => Effect.Effect<void, StorageFailed | InvalidRequest>
}

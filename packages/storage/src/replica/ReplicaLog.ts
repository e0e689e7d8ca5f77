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
   * past the writer checkpoint. InvalidRequest: `from` is not a record boundary of this log, or lies in a
   * scavenged chunk (sending scavenged chunks whole is not built).
   */
  readonly readRaw: (from: number, maxBytes: number) => Effect.Effect<RawSlice | undefined, ReadError | InvalidRequest>
  /** Writes a slice received from the leader at this node's writer checkpoint (`slice.position` must equal it), durably. */
  readonly appendRaw: (slice: RawSlice) => Effect.Effect<void, StorageFailed | InvalidRequest>
  /** Indexes everything up to `position` (capped at the writer checkpoint) and makes it readable. */
  readonly commitTo: (position: number) => Effect.Effect<void, ReadError | StorageCorrupt>
  /** Cuts the uncommitted tail back to `position` (a record boundary, at or past `committed`), durably. */
  readonly truncate: (position: number) => Effect.Effect<void, StorageFailed | InvalidRequest>
}

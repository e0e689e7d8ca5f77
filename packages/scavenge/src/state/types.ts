/**
 * The values the scavenge state holds, keyed by stream NAME: a name-keyed state
 * needs no hash-collision tables. Every value is immutable; a change replaces the whole value.
 */
import { Schema } from "effect"

/** Calculation status of an original stream: recalculate next time, tombstoned (skip, keep), or done. */
export type CalculationStatus = "Active" | "Archived" | "Spent"

/** An original stream that has metadata or a tombstone. */
export interface OriginalStreamData {
  readonly isTombstoned: boolean
  readonly maxAgeSeconds: number | undefined
  readonly maxCount: number | undefined
  readonly truncateBefore: number | undefined
  /** First event number to keep (0 = keep all). */
  readonly discardPoint: number
  readonly maybeDiscardPoint: number
  readonly status: CalculationStatus
  /**
   * The stream's last event number when it was last calculated, if its limits have not changed since
   * (accumulating new metadata or a tombstone clears it): a stream without `$maxAge` whose last event is
   * still this one has nothing new to remove, so the calculator skips it.
   */
  readonly calculatedLast?: number | undefined
  /**
   * The log position of that last event. While the newest index entry of the stream's hash is still the one
   * at this position, nothing was appended to the stream: the calculator knows it without reading a record.
   */
  readonly calculatedLastPosition?: number | undefined
}

export interface MetastreamData {
  readonly isTombstoned: boolean
  /** First event number to keep (0 = keep all). */
  readonly discardPoint: number
}

export interface ScavengePointInfo {
  readonly position: number
  readonly number: number
  readonly effectiveNowMicros: number
  readonly threshold: number
}

/** Where the run is; resumption rules are in docs/scavenging.md. */
export type Checkpoint =
  | { readonly stage: "Accumulating"; readonly sp: ScavengePointInfo; readonly doneLogicalChunk: number | undefined }
  | { readonly stage: "Calculating"; readonly sp: ScavengePointInfo; readonly doneStream: string | undefined }
  | { readonly stage: "ExecutingChunks"; readonly sp: ScavengePointInfo; readonly doneLogicalChunk: number | undefined }
  | { readonly stage: "MergingChunks" | "ExecutingIndex" | "Cleaning" | "Done"; readonly sp: ScavengePointInfo }

export type CheckpointStage = Checkpoint["stage"]

/** Bounds (inclusive, microseconds since the epoch) on the record timestamps of one logical chunk. */
export interface ChunkTimeRange {
  readonly minMicros: number
  readonly maxMicros: number
}

export interface ChunkWeight {
  readonly logicalChunk: number
  readonly weight: number
}

export interface ScavengeStateCounts {
  readonly originalStreams: number
  readonly activeStreams: number
  readonly metastreams: number
  readonly chunkWeights: number
  readonly chunkTimeRanges: number
  /** Bytes of committed transactions in the journal since the last snapshot. */
  readonly journalBytes: number
  /** Size of the last snapshot written or loaded (0 when there is none). */
  readonly snapshotBytes: number
  /**
   * Estimated heap bytes of the rows held in memory: decoded snapshot pages in the cache and the delta (rows
   * committed since the snapshot). Kept within `cacheBytes` (see ScavengeState.ts).
   */
  readonly residentBytes: number
  readonly pageCacheBytes: number
  readonly deltaBytes: number
  /** The always-resident index of the snapshot: page directory and Bloom filters (up to ~1.9 bytes per row, plus a name per page). */
  readonly indexBytes: number
}

/**
 * What a sync lookup answers when the row is not in memory (its page is not cached): the caller falls back
 * to the Effect lookup.
 */
export const NotResident: unique symbol = Symbol.for("@vellum/scavenge/NotResident")
export type NotResident = typeof NotResident

/** Which original streams a cleaning removed wholesale (`deleteSpentStreams`). */
export type SpentDeletion = "none" | "spent" | "spentOrArchived"

/** The state files hold bytes the state did not write: a damaged snapshot or a gap in the journal. */
export class StateCorrupt extends Schema.TaggedError<StateCorrupt>()("StateCorrupt", {
  path: Schema.String,
  /** What is wrong where, for people. */
  detail: Schema.String
}) {
  override get message() {
    return `Scavenge state is corrupt (${this.path}): ${this.detail}`
  }
}

/**
 * One committed transaction as a net change: first the wholesale deletions ("delete every metastream",
 * "delete Spent (and Archived) original streams"), then the final value (or `null` = deleted) of every key
 * it touched. The journal stores exactly this; the wholesale deletions stay predicates, so a commit never
 * has to enumerate rows that are not in memory.
 */
export interface StateChange {
  readonly checkpoint: Checkpoint | undefined
  readonly clearMetastreams: boolean
  readonly deleteSpent: SpentDeletion
  readonly originals: ReadonlyMap<string, OriginalStreamData | null>
  readonly metastreams: ReadonlyMap<string, MetastreamData | null>
  readonly weights: ReadonlyMap<number, number | null>
  readonly timeRanges: ReadonlyMap<number, ChunkTimeRange | null>
}
